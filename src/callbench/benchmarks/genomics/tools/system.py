"""Task list, working directory, UI controls and small utilities."""

from __future__ import annotations

import json
from typing import Any

from callbench.benchmarks.genomics.tools._spec import FILE, TOOLS, boolean, enum, string, tool
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

TASKS = "task_management"
SYSTEM = "system_ui"
UTILITY = "utility"
PRIORITY = enum("Priority", ["low", "medium", "high"], default="medium")
STATUS = enum("Status", ["pending", "in_progress", "done"])


def _task(ws: Workspace, task_id: str) -> dict[str, Any]:
    for task in ws.tasks:
        if task["id"] == task_id:
            return task
    raise ToolError(f"no task {task_id!r}")


@tool(
    TASKS,
    "Add a task to the session's to-do list.",
    params={"title": string("Task title"), "priority": PRIORITY, "description": string("Details")},
    required=("title",),
    keywords=("todo", "reminder"),
    result={"id": string("Task id")},
)
def add_task(ws: Workspace, title: str, priority: str = "medium", description: str = "") -> dict[str, Any]:
    task = {
        "id": ws.next_id("task"),
        "title": title,
        "priority": priority,
        "description": description,
        "status": "pending",
    }
    ws.tasks.append(task)
    return dict(task)


@tool(
    TASKS,
    "Update a task's status, title or priority.",
    params={
        "taskId": string("Task id, e.g. task_1"),
        "status": STATUS,
        "title": string("New title"),
        "priority": enum("Priority", ["low", "medium", "high"]),
    },
    required=("taskId",),
    keywords=("mark done", "complete task", "progress"),
)
def update_task(
    ws: Workspace,
    taskId: str,
    status: str | None = None,
    title: str | None = None,
    priority: str | None = None,
) -> dict[str, Any]:
    task = _task(ws, taskId)
    task.update(
        {k: v for k, v in (("status", status), ("title", title), ("priority", priority)) if v is not None}
    )
    return dict(task)


@tool(
    TASKS,
    "List tasks, optionally only those with a status.",
    params={"status": STATUS},
    read_only=True,
    keywords=("todo list", "open tasks"),
)
def list_tasks(ws: Workspace, status: str | None = None) -> dict[str, Any]:
    items = [dict(t) for t in ws.tasks if status is None or t["status"] == status]
    return {"tasks": items, "count": len(items)}


@tool(
    TASKS,
    "Delete one task.",
    params={"taskId": string("Task id")},
    required=("taskId",),
    keywords=("remove task",),
)
def delete_task(ws: Workspace, taskId: str) -> dict[str, Any]:
    ws.tasks.remove(_task(ws, taskId))
    return {"deleted": taskId, "remaining": len(ws.tasks)}


@tool(
    TASKS,
    "Delete every task (or only completed ones).",
    params={"onlyDone": boolean("Only remove completed tasks", default=False)},
    keywords=("empty todo list",),
)
def clear_tasks(ws: Workspace, onlyDone: bool = False) -> dict[str, Any]:
    before = len(ws.tasks)
    ws.tasks[:] = [t for t in ws.tasks if onlyDone and t["status"] != "done"]
    return {"removed": before - len(ws.tasks), "remaining": len(ws.tasks)}


@tool(
    SYSTEM,
    "Set the working directory, relative to the current one (inside the session folder; created if missing).",
    params={"directory_path": string("Directory path")},
    required=("directory_path",),
    keywords=("cd", "change directory", "folder"),
)
def set_working_directory(ws: Workspace, directory_path: str) -> dict[str, Any]:
    path = ws.writable(directory_path)
    if path.exists() and not path.is_dir():
        raise ToolError(f"{directory_path} exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file where a folder of the path should be, a read-only place...
        raise ToolError(f"cannot create {directory_path!r}: {exc.strerror or exc}") from None
    ws.cwd = ws.relative(path) or "."
    return {"workingDirectory": ws.cwd}


@tool(
    SYSTEM,
    "List the workbench's tools, optionally one category.",
    params={"category": string("Category name")},
    read_only=True,
    keywords=("help", "capabilities"),
)
def list_available_tools(ws: Workspace, category: str | None = None) -> dict[str, Any]:
    names = sorted(n for n, s in TOOLS.items() if category is None or s.category == category)
    return {"tools": names, "count": len(names)}


def _ui(ws: Workspace, key: str, value: Any) -> dict[str, Any]:
    ws.ui[key] = value
    return {key: value}


@tool(
    SYSTEM,
    "Show or hide the chat box.",
    params={"visible": boolean("true shows, false hides")},
    required=("visible",),
    keywords=("chat window", "assistant panel"),
)
def toggle_chatbox(ws: Workspace, visible: bool) -> dict[str, Any]:
    return _ui(ws, "chatbox_visible", visible)


@tool(
    SYSTEM,
    "Dock the chat box or let it float.",
    params={"layout": enum("Layout", ["floating", "docked"])},
    required=("layout",),
    keywords=("dock chat", "chat position"),
)
def set_chatbox_layout(ws: Workspace, layout: str) -> dict[str, Any]:
    return _ui(ws, "chatbox_layout", layout)


@tool(
    SYSTEM,
    "Minimise or restore the chat box.",
    params={"minimized": boolean("true minimises")},
    required=("minimized",),
    keywords=("collapse chat",),
)
def set_chatbox_minimized(ws: Workspace, minimized: bool) -> dict[str, Any]:
    return _ui(ws, "chatbox_minimized", minimized)


@tool(
    SYSTEM,
    "Show or hide the sidebar.",
    params={"visible": boolean("true shows, false hides")},
    required=("visible",),
    keywords=("side panel",),
)
def toggle_sidebar(ws: Workspace, visible: bool) -> dict[str, Any]:
    return _ui(ws, "sidebar_visible", visible)


@tool(
    SYSTEM,
    "Expand or collapse one sidebar panel.",
    params={
        "panel": enum("Panel", ["genes", "tracks", "files", "primers", "blast"]),
        "expanded": boolean("true expands, false collapses"),
    },
    required=("panel", "expanded"),
    keywords=("sidebar section",),
)
def toggle_sidebar_panel(ws: Workspace, panel: str, expanded: bool) -> dict[str, Any]:
    ws.ui["sidebar_panels"][panel] = expanded
    return {"panel": panel, "expanded": expanded}


@tool(
    SYSTEM,
    "Expand or collapse the top banner.",
    params={"action": enum("Action", ["expand", "collapse"])},
    required=("action",),
    keywords=("header", "banner"),
)
def toggle_top_banner(ws: Workspace, action: str) -> dict[str, Any]:
    return _ui(ws, "top_banner", "expanded" if action == "expand" else "collapsed")


@tool(
    SYSTEM,
    "Open or close the settings dialog.",
    params={"open": boolean("true opens, false closes")},
    required=("open",),
    keywords=("preferences", "settings window"),
)
def toggle_settings_modal(ws: Workspace, open: bool) -> dict[str, Any]:
    return _ui(ws, "settings_modal_open", open)


@tool(
    SYSTEM,
    "Switch the application's visual style.",
    params={"style_name": enum("Style", ["classic", "midnight", "light", "high_contrast"])},
    required=("style_name",),
    keywords=("theme", "dark mode", "appearance"),
)
def switch_ui_style(ws: Workspace, style_name: str) -> dict[str, Any]:
    return _ui(ws, "style", style_name)


@tool(
    UTILITY,
    "Read a Markdown file from the working directory and return its text.",
    params={"filePath": FILE},
    required=("filePath",),
    read_only=True,
    keywords=("readme", "notes", "view file"),
)
def view_markdown_file(ws: Workspace, filePath: str) -> dict[str, Any]:
    text = ws.read_text(filePath)
    return {"filePath": filePath, "content": text[:20000], "lines": text.count("\n")}


@tool(
    UTILITY,
    "List the files of a folder in the session directory.",
    params={"directory_path": string("Folder", default=".")},
    read_only=True,
    keywords=("ls", "dir", "files"),
)
def list_directory(ws: Workspace, directory_path: str = ".") -> dict[str, Any]:
    path = ws.existing_folder(directory_path)
    return {
        "directory": directory_path,
        "entries": sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir()),
    }


OFFLINE_DOWNLOADS = {"https://example.org/genomics/primers.json": json.dumps({"primers": ["P1", "P2"]})}


@tool(
    UTILITY,
    "Download a file from a URL into the working directory. Benchmark mode: no network; only the "
    "bundled demo URL https://example.org/genomics/primers.json is served, from a fixture.",
    params={"url": string("URL"), "filename": FILE},
    required=("url", "filename"),
    keywords=("download", "fetch url", "internet"),
)
def download_internet_file(ws: Workspace, url: str, filename: str) -> dict[str, Any]:
    if url not in OFFLINE_DOWNLOADS:
        raise ToolError(
            "network access is disabled in benchmark mode; this URL is not in the offline fixture"
        )
    return {"filePath": ws.write_file(filename, OFFLINE_DOWNLOADS[url]), "source": "offline fixture"}
