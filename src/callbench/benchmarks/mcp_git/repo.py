"""The per-case Git repository: a known history built once per process, copied for every case.

Everything that could vary between machines is fixed: author and committer, dates (through
``GIT_AUTHOR_DATE``/``GIT_COMMITTER_DATE``), the default branch name, and no user or system Git
configuration. The same environment is given to the server, so commits a case makes are identical
on every run (same hashes).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from callbench.plugin import ConfigError

LOGICAL_ROOT = "/repo"
"""The repository path models see and expected arguments use; the executor maps it to the case's folder."""
FIXED_DATE = "1769947200 +0000"
"""2026-02-01 12:00 UTC in Git's raw form, the one both git and GitPython (the server) read."""
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Bench",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada Bench",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_AUTHOR_DATE": FIXED_DATE,
    "GIT_COMMITTER_DATE": FIXED_DATE,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}
"""The environment of every git command here and of the server process."""

# (date, message, {path: content}, branch to commit on); branches are created where the history says.
HISTORY: list[tuple[str, str, dict[str, str]]] = [
    (
        "2026-01-05T09:00:00+00:00",
        "Initial commit",
        {"README.md": "# Inventory\n\nA small inventry service.\n", "src/app.py": 'print("inventory")\n'},
    ),
    (
        "2026-01-12T10:30:00+00:00",
        "Add config loader",
        {"src/config.py": "SETTINGS = {'debug': False}\n"},
    ),
    (
        "2026-01-20T16:45:00+00:00",
        "Fix typo in README",
        {"README.md": "# Inventory\n\nA small inventory service.\n"},
    ),
]
FEATURE_COMMIT = (
    "2026-01-25T11:15:00+00:00",
    "Add login form",
    {"src/login.py": "def login(user):\n    return True\n"},
)

_TEMPLATE: Path | None = None
_LOCK = threading.Lock()


def git(folder: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run ``git -C folder ARGS`` with the fixed environment; its stdout (a failure is a ConfigError)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args],
            env={**os.environ, **GIT_ENV, **(env or {})},
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        raise ConfigError("suite 'mcp-git' needs the 'git' program on PATH") from None
    if done.returncode != 0:
        raise ConfigError(f"git {' '.join(args)} failed in {folder}: {done.stderr.strip()}")
    return done.stdout


def _write(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def _commit(root: Path, date: str, message: str, files: dict[str, str]) -> None:
    _write(root, files)
    git(root, "add", "--", *files)
    git(root, "commit", "-q", "-m", message, env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})


def build_template(root: Path) -> None:
    """The known history and working tree every case starts from.

    main: Initial commit -> Add config loader -> Fix typo in README (HEAD, checked out)
    hotfix: at "Add config loader"; feature/login: "Fix typo in README" + "Add login form".
    Working tree: CHANGELOG.md added and staged, src/app.py modified (not staged), notes.txt untracked.
    """
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for index, (date, message, files) in enumerate(HISTORY):
        _commit(root, date, message, files)
        if index == 1:
            git(root, "branch", "hotfix")
    git(root, "checkout", "-q", "-b", "feature/login")
    _commit(root, *FEATURE_COMMIT)
    git(root, "checkout", "-q", "main")
    _write(root, {"CHANGELOG.md": "## Unreleased\n\n- Config loader\n"})
    git(root, "add", "CHANGELOG.md")
    _write(root, {"src/app.py": 'print("inventory service")\n', "notes.txt": "remember the milk\n"})


def make_repository(folder: Path) -> Path:
    """A fresh copy of the known repository at ``folder`` (created), returned."""
    global _TEMPLATE
    with _LOCK:
        if _TEMPLATE is None:
            base = Path(tempfile.mkdtemp(prefix="callbench-mcp-git-template-"))
            atexit.register(shutil.rmtree, base, True)
            build_template(base / "repo")
            _TEMPLATE = base / "repo"
    folder.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(_TEMPLATE, folder, symlinks=True)
    return folder


def git_state(folder: Path) -> dict[str, Any]:
    """What the state check compares: branch, HEAD subject, commit count, branches, index and tree."""
    staged: list[str] = []
    unstaged: list[str] = []
    untracked: list[str] = []
    for line in git(folder, "status", "--porcelain=v1", "--untracked-files=all").splitlines():
        code, path = line[:2], line[3:]
        if code == "??":
            untracked.append(path)
            continue
        if code[0] != " ":
            staged.append(f"{code[0]} {path}")
        if code[1] != " ":
            unstaged.append(f"{code[1]} {path}")
    branch = git(folder, "rev-parse", "--abbrev-ref", "HEAD").strip()
    return {
        "branch": branch,
        "head_subject": git(folder, "log", "-1", "--format=%s").strip(),
        "commit_count": int(git(folder, "rev-list", "--count", "HEAD").strip()),
        "branches": sorted(git(folder, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()),
        "staged": sorted(staged),
        "unstaged": sorted(unstaged),
        "untracked": sorted(untracked),
    }
