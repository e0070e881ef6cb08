"""``callbench data fetch NAME``: download a data set that a suite reads with ``--data``.

Downloads go through the data set hub's own Python client (the optional ``hub`` extra), on the
user's machine; callbench never ships the data.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import typer

from callbench.cli.groups import group


@dataclass(frozen=True)
class HubDataset:
    """One file of a data set repository on the hub."""

    repo_id: str
    filename: str
    suite: str
    repo_type: str = "dataset"


DATASETS = {
    "complexfuncbench": HubDataset("zai-org/ComplexFuncBench", "ComplexFuncBench.jsonl", "complexfuncbench"),
}


def fetch(name: str, out: Path, *, revision: str | None = None) -> Path:
    """Download data set ``name`` into ``out`` and return the local file path.

    Raises:
        UserError: unknown name, or the ``hub`` extra is not installed.
    """
    from callbench.plugin import (  # here: every CLI start imports this module
        UserError,
        did_you_mean,
        missing_extra,
    )

    source = DATASETS.get(name)
    if source is None:
        raise UserError(f"unknown data set {name!r}{did_you_mean(name, DATASETS)}")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise missing_extra("fetching data sets", "huggingface_hub", "hub") from None
    _check_reachable(name, source, revision)
    out.mkdir(parents=True, exist_ok=True)
    try:
        path = hf_hub_download(
            repo_id=source.repo_id,
            filename=source.filename,
            repo_type=source.repo_type,
            revision=revision,
            local_dir=str(out),
        )
    except Exception as exc:  # the hub client raises many types (HTTP, connection, offline, auth)
        raise UserError(_download_failed(name, source, revision, exc)) from None
    return Path(path)


def _url(source: HubDataset, revision: str | None) -> str:
    """The file's download address, as the hub client forms it (``HF_ENDPOINT`` moves the hub)."""
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    kind = "" if source.repo_type == "model" else f"{source.repo_type}s/"
    return f"{endpoint}/{kind}{source.repo_id}/resolve/{revision or 'main'}/{source.filename}"


def _check_reachable(name: str, source: HubDataset, revision: str | None) -> None:
    """Connect once to the hub's host before downloading: with no network the hub client retries
    for half a minute and then names no cause. Skipped behind a proxy (the client uses it, we don't).
    """
    from callbench.plugin import UserError

    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")):
        return
    url = urlsplit(_url(source, revision))
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname or "", port), timeout=10).close()
    except OSError as exc:
        raise UserError(_download_failed(name, source, revision, exc)) from None


def _download_failed(name: str, source: HubDataset, revision: str | None, exc: BaseException) -> str:
    """One line: the data set, the URL tried, the root error and the local-file way out."""
    while exc.__cause__ is not None or exc.__context__ is not None:  # the hub wraps the real cause
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    reason = " ".join(str(exc).split()) or type(exc).__name__
    if len(reason) > 300:  # some hub errors carry a whole response body
        reason = reason[:299] + "…"
    return (
        f"cannot download data set {name!r} from {_url(source, revision)}: {type(exc).__name__}: "
        f"{reason}; download {source.filename} by other means and run with "
        f"--suite {source.suite} --data PATH"
    )


def fetch_cmd(
    name: str = typer.Argument(..., help=f"Data set name ({', '.join(DATASETS)})."),
    out: Path = typer.Option(Path("data"), "-o", "--out", help="Folder to save the file in."),
    revision: str = typer.Option(
        None, "--revision", help="Hub revision (branch, tag or commit); default: main."
    ),
) -> None:
    """Download a data set from the hub (needs network and the 'hub' extra)."""
    path = fetch(name, out, revision=revision)
    typer.echo(f"saved {path}")
    typer.echo(
        f"run it with: callbench run --suite {DATASETS[name].suite} --data {path} --model PROVIDER:MODEL"
    )


def register_commands(app: typer.Typer) -> None:
    """Add ``data fetch`` to the shared ``data`` group."""
    group(app, "data").command("fetch")(fetch_cmd)
