"""One writer per run folder: ``run.lock`` names the live process that is writing it.

A run (new or ``--resume``d) and ``callbench score`` take the lock for as long as they write
``records.jsonl`` and ``summary.json``; review writes check it. A second writer is refused with one
line instead of rewriting a file the first is still appending to (``score`` on a running run kept 40
of 440 records) or playing the same cases again (``--resume`` on a running run paid twice).

The lock is a small JSON file made with ``O_CREAT | O_EXCL``: its holder's pid, host, start time and
what it is doing. A lock whose process is gone (same host, no such pid: a run that was killed) is
stale and taken over; a lock from another host cannot be checked and is honoured, with the line
saying how to remove it. Readers (``show``, ``view``, ``report``) take no lock: they read the
records written so far.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from callbench.errors import UserError

LOCK_FILE = "run.lock"


class RunFolderBusy(UserError):
    """Another live process is writing the run folder."""


@dataclass(frozen=True)
class Holder:
    """Who holds a run folder's lock."""

    pid: int
    host: str
    since: str
    purpose: str

    def alive(self) -> bool | None:
        """Whether the holding process still runs (``None``: on another host, cannot tell)."""
        if self.host != socket.gethostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's process: it exists
            return True
        return True


@dataclass
class RunLock:
    """A held lock; :meth:`release` removes the file if it is still this holder's."""

    path: Path
    holder: Holder

    def release(self) -> None:
        if read_holder(self.path.parent) == self.holder:
            self.path.unlink(missing_ok=True)


def read_holder(run_dir: Path) -> Holder | None:
    """The holder written in ``run_dir``'s lock, or ``None`` when there is no readable lock."""
    try:
        data = json.loads((run_dir / LOCK_FILE).read_text(encoding="utf-8"))
        return Holder(int(data["pid"]), str(data["host"]), str(data["since"]), str(data["purpose"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def acquire(run_dir: Path, purpose: str) -> RunLock:
    """Take ``run_dir``'s lock for ``purpose`` (``run``, ``resume``, ``score``...), or raise
    :class:`RunFolderBusy` naming the live holder. A stale lock is taken over."""
    path = run_dir / LOCK_FILE
    holder = Holder(
        os.getpid(), socket.gethostname(), datetime.now(UTC).isoformat(timespec="seconds"), purpose
    )
    for _ in range(30):  # a stale lock removed, or one being written this instant, is tried again
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            current = read_holder(run_dir)
            if current is None or current.alive() is False:
                _remove_stale(path, current)
                time.sleep(0.1)
                continue
            raise RunFolderBusy(busy_message(run_dir, current, purpose)) from None
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(holder)))
        return RunLock(path, holder)
    raise RunFolderBusy(f"{run_dir}: cannot take {LOCK_FILE} (another process keeps replacing it)")


def _remove_stale(path: Path, current: Holder | None) -> None:
    """Remove a lock whose process is gone. An unreadable lock is removed only once it is a few seconds
    old: a holder may be writing it this instant."""
    if current is None:
        try:
            age = datetime.now().timestamp() - path.stat().st_mtime
        except OSError:
            return
        if age < 5:
            return
    path.unlink(missing_ok=True)


def refuse_if_busy(run_dir: Path, purpose: str) -> None:
    """Raise :class:`RunFolderBusy` when a live process holds ``run_dir``'s lock (for writers that
    append without taking it, such as reviews)."""
    current = read_holder(run_dir)
    if current is not None and current.alive() is not False:
        raise RunFolderBusy(busy_message(run_dir, current, purpose))


def busy_message(run_dir: Path, holder: Holder, purpose: str) -> str:
    """One line: who writes the folder, and what the refused command must do."""
    where = f"pid {holder.pid} on {holder.host}, {holder.purpose} since {holder.since}"
    advice = f"{purpose} it once that process has ended"
    if holder.alive() is None:
        advice += f" (it runs on another host; if it is gone, delete {run_dir / LOCK_FILE})"
    return f"{run_dir}: a live process is writing this run ({where}); {advice}"
