"""``callbench data fetch NAME``: download a data set that a suite reads with ``--data``.

Downloads go through the data set hub's own Python client (the optional ``hub`` extra), on the
user's machine; callbench never ships the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import typer

from callbench.cli.groups import group
from callbench.errors import UserError
from callbench.types.names import did_you_mean


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
    source = DATASETS.get(name)
    if source is None:
        raise UserError(f"unknown data set {name!r}{did_you_mean(name, DATASETS)}")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise UserError("fetching data sets needs the 'hub' extra: pip install 'callbench[hub]'") from None
    out.mkdir(parents=True, exist_ok=True)
    path = hf_hub_download(
        repo_id=source.repo_id,
        filename=source.filename,
        repo_type=source.repo_type,
        revision=revision,
        local_dir=str(out),
    )
    return Path(path)


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
