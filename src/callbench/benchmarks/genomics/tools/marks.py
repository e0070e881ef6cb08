"""Highlights, bookmarks, tabs and windows."""

from __future__ import annotations

from typing import Any

from callbench.benchmarks.genomics.tools._spec import CHROM, END, START, string, tool
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

MARKS = "highlights_bookmarks"
TABS = "tabs_windows"


@tool(
    MARKS,
    "Highlight a region in the browser with a label and colour.",
    params={
        "chromosome": CHROM,
        "start": START,
        "end": END,
        "label": string("Label shown on the highlight"),
        "color": string("Highlight colour", default="#ffeb3b"),
    },
    required=("start", "end"),
    keywords=("mark", "emphasize", "colour region"),
    result={"id": string("Highlight id")},
)
def highlight_region(
    ws: Workspace,
    start: int,
    end: int,
    chromosome: str | None = None,
    label: str = "",
    color: str = "#ffeb3b",
) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    mark = {
        "id": ws.next_id("highlight"),
        "chromosome": chrom,
        "start": s,
        "end": e,
        "label": label,
        "color": color,
    }
    ws.highlights.append(mark)
    return dict(mark)


@tool(
    MARKS,
    "List the current highlights.",
    read_only=True,
    params={"chromosome": CHROM},
    keywords=("highlighted regions",),
)
def list_highlights(ws: Workspace, chromosome: str | None = None) -> dict[str, Any]:
    items = [h for h in ws.highlights if chromosome is None or h["chromosome"] == chromosome]
    return {"highlights": items, "count": len(items)}


@tool(
    MARKS,
    "Remove one highlight by its id (or by its label).",
    params={"highlightId": string("Highlight id, e.g. highlight_1, or its label")},
    required=("highlightId",),
    keywords=("unhighlight", "delete highlight"),
)
def remove_highlight(ws: Workspace, highlightId: str) -> dict[str, Any]:
    for i, mark in enumerate(ws.highlights):
        if highlightId in (mark["id"], mark["label"]):
            del ws.highlights[i]
            return {"removed": mark["id"], "remaining": len(ws.highlights)}
    raise ToolError(f"no highlight {highlightId!r}")


@tool(MARKS, "Remove every highlight.", keywords=("clear highlighted", "remove all highlights"))
def clear_highlights(ws: Workspace) -> dict[str, Any]:
    n = len(ws.highlights)
    ws.highlights.clear()
    return {"removed": n}


@tool(
    MARKS,
    "Bookmark a region (or the current view when no coordinates are given) under a name.",
    params={
        "name": string("Bookmark name"),
        "chromosome": CHROM,
        "start": START,
        "end": END,
        "notes": string("Free-text notes"),
    },
    required=("name",),
    keywords=("save position", "favourite", "bookmark"),
    result={"id": string("Bookmark id")},
)
def bookmark_position(
    ws: Workspace,
    name: str,
    chromosome: str | None = None,
    start: int | None = None,
    end: int | None = None,
    notes: str = "",
) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    mark = {
        "id": ws.next_id("bookmark"),
        "name": name,
        "chromosome": chrom,
        "start": s,
        "end": e,
        "notes": notes,
    }
    ws.bookmarks.append(mark)
    return dict(mark)


@tool(MARKS, "List saved bookmarks.", read_only=True, keywords=("saved positions", "favourites"))
def get_bookmarks(ws: Workspace) -> dict[str, Any]:
    return {"bookmarks": list(ws.bookmarks), "count": len(ws.bookmarks)}


@tool(
    MARKS,
    "Delete a bookmark by id or name.",
    params={"bookmark": string("Bookmark id or name")},
    required=("bookmark",),
    keywords=("remove bookmark",),
)
def delete_bookmark(ws: Workspace, bookmark: str) -> dict[str, Any]:
    for i, mark in enumerate(ws.bookmarks):
        if bookmark in (mark["id"], mark["name"]):
            del ws.bookmarks[i]
            return {"deleted": mark["id"]}
    raise ToolError(f"no bookmark {bookmark!r}")


@tool(
    TABS,
    "Open a new browser tab showing the current view (or a given region).",
    params={"title": string("Tab title"), "chromosome": CHROM, "start": START, "end": END},
    keywords=("new tab", "another tab"),
    result={"tab_id": string("Id of the new tab")},
)
def open_new_tab(
    ws: Workspace,
    title: str | None = None,
    chromosome: str | None = None,
    start: int | None = None,
    end: int | None = None,
) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    tab_id = ws.next_id("tab")  # the counter starts at 1: tab_1 is the initial tab
    view = {"chromosome": chrom, "start": s, "end": e}
    ws.tabs.append({"id": tab_id, "title": title or f"{chrom}:{s}-{e}", "view": view})
    ws.active_tab = tab_id
    ws.view = dict(view)
    return {"tab_id": tab_id, "title": ws.tabs[-1]["title"], "tabCount": len(ws.tabs)}


def _find_tab(ws: Workspace, tab: str | int) -> dict[str, Any]:
    for i, entry in enumerate(ws.tabs):
        if str(tab) in (entry["id"], entry["title"], str(i + 1)):
            return entry
    raise ToolError(f"no tab {tab!r}; open tabs: {', '.join(t['id'] for t in ws.tabs)}")


@tool(
    TABS,
    "Switch to another tab by id (tab_2), title, or 1-based position.",
    params={"tabId": string("Tab id, title or 1-based position")},
    required=("tabId",),
    keywords=("go to tab", "activate tab"),
)
def switch_to_tab(ws: Workspace, tabId: str) -> dict[str, Any]:
    entry = _find_tab(ws, tabId)
    ws.active_tab = entry["id"]
    ws.view = dict(entry["view"])
    return {"activeTab": entry["id"], "view": dict(ws.view)}


@tool(
    TABS,
    "Close a tab (the active one when no id is given). The last tab cannot be closed.",
    params={"tabId": string("Tab id, title or 1-based position")},
    keywords=("close tab",),
)
def close_tab(ws: Workspace, tabId: str | None = None) -> dict[str, Any]:
    entry = _find_tab(ws, tabId or ws.active_tab)
    if len(ws.tabs) == 1:
        raise ToolError("cannot close the last tab")
    ws.tabs.remove(entry)
    if ws.active_tab == entry["id"]:
        ws.active_tab = ws.tabs[-1]["id"]
        ws.view = dict(ws.tabs[-1]["view"])
    return {"closed": entry["id"], "activeTab": ws.active_tab, "tabCount": len(ws.tabs)}


@tool(TABS, "List open tabs and the active one.", read_only=True, keywords=("open tabs",))
def list_tabs(ws: Workspace) -> dict[str, Any]:
    return {"tabs": [{"id": t["id"], "title": t["title"]} for t in ws.tabs], "activeTab": ws.active_tab}


@tool(TABS, "List genome browser windows.", read_only=True, keywords=("windows",))
def list_genome_windows(ws: Workspace) -> dict[str, Any]:
    return {"windows": list(ws.windows), "activeWindow": ws.active_window}


@tool(
    TABS,
    "Open a new genome browser window.",
    params={"title": string("Window title")},
    keywords=("new window",),
    result={"window_id": string("Window id")},
)
def open_new_window(ws: Workspace, title: str = "Genome browser") -> dict[str, Any]:
    win_id = ws.next_id("window")
    ws.windows.append({"id": win_id, "title": title})
    ws.active_window = win_id
    return {"window_id": win_id, "windowCount": len(ws.windows)}


@tool(
    TABS,
    "Bring another genome window to the front.",
    params={"windowId": string("Window id, e.g. window_2")},
    required=("windowId",),
    keywords=("focus window",),
)
def switch_active_window(ws: Workspace, windowId: str) -> dict[str, Any]:
    if not any(w["id"] == windowId for w in ws.windows):
        raise ToolError(f"no window {windowId!r}")
    ws.active_window = windowId
    return {"activeWindow": windowId}


@tool(
    TABS,
    "Rename a tab.",
    params={"tabId": string("Tab id"), "title": string("New title")},
    required=("tabId", "title"),
    keywords=("rename tab",),
)
def rename_tab(ws: Workspace, tabId: str, title: str) -> dict[str, Any]:
    entry = _find_tab(ws, tabId)
    entry["title"] = title
    return {"tab_id": entry["id"], "title": title}
