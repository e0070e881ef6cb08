"""``shared_fresh``: xdist workers build the fresh-venv fixture once between them, under a file lock.

The real install (a minute of pip) is replaced by a stand-in that records each build; the lock, the
ready mark and the retry after a failure are the real ones.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
from pathlib import Path

import fresh_cli
import pytest
from fresh_cli import READY, FreshCli, shared_fresh, start_prefetch


def _slow_build(venv: Path, scratch: Path) -> FreshCli:
    """Stand-in for ``install_fresh``: slow enough that a second process arrives mid-build."""
    venv.mkdir(parents=True)
    time.sleep(0.5)
    with (venv.parent / "builds.log").open("a") as log:
        log.write(f"{venv}\n")
    return FreshCli(script=venv / "bin" / "callbench", scratch=scratch)


def _worker(root: str, scratch: str, out: multiprocessing.Queue) -> None:
    fresh_cli.install_fresh = _slow_build  # this process's own module: the build is the stand-in
    got = shared_fresh(Path(root), Path(scratch))
    out.put((str(got.script), str(got.scratch)))


def test_two_workers_build_one_venv_and_keep_their_own_scratch(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    results: multiprocessing.Queue = context.Queue()
    workers = [
        context.Process(target=_worker, args=(str(tmp_path), str(tmp_path / f"scratch-{i}"), results))
        for i in range(2)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    got = sorted(results.get(timeout=5) for _ in workers)

    assert (tmp_path / "builds.log").read_text().splitlines() == [str(tmp_path / "fresh-venv")]
    assert (tmp_path / "fresh-venv" / READY).is_file()
    script = str(tmp_path / "fresh-venv" / "bin" / "callbench")
    assert got == [(script, str(tmp_path / "scratch-0")), (script, str(tmp_path / "scratch-1"))]


def test_a_failed_build_is_retried_by_the_next_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[Path] = []

    def broken(venv: Path, scratch: Path) -> FreshCli:
        attempts.append(venv)
        venv.mkdir(parents=True)
        (venv / "half-installed").write_text("")
        raise AssertionError("pip install of the project failed")

    monkeypatch.setattr(fresh_cli, "install_fresh", broken)
    with pytest.raises(AssertionError, match="pip install of the project failed"):
        shared_fresh(tmp_path, tmp_path / "scratch")
    assert not (tmp_path / "fresh-venv" / READY).exists()

    monkeypatch.setattr(fresh_cli, "install_fresh", _slow_build)
    got = shared_fresh(tmp_path, tmp_path / "scratch")
    assert got.script == tmp_path / "fresh-venv" / "bin" / "callbench"
    assert not (tmp_path / "fresh-venv" / "half-installed").exists()  # the failed attempt was cleared
    assert (tmp_path / "builds.log").read_text().splitlines() == [str(tmp_path / "fresh-venv")]
    assert attempts == [tmp_path / "fresh-venv"]


def test_only_the_first_worker_starts_the_background_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", "/bin/true")  # the process starts, and builds nothing
    first = start_prefetch(tmp_path)
    assert first is not None
    assert first.wait(timeout=30) == 0
    assert first.args == ["/bin/true", fresh_cli.__file__, str(tmp_path)]
    assert start_prefetch(tmp_path) is None  # the second worker: already started
    assert (tmp_path / "fresh-venv.started").is_file() and (tmp_path / "fresh-venv.log").is_file()
