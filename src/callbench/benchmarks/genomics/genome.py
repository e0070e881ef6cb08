"""Genome files: parse GenBank/FASTA into plain chromosomes and features (cached, immutable)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from callbench.plugin import ToolError

DEFAULT_GENOME = "syn_genome.gbk"


def data_dir() -> Path:
    """Folder of the bundled data files (inside the installed package)."""
    return Path(str(resources.files("callbench.benchmarks.genomics") / "data"))


@dataclass(frozen=True)
class Feature:
    """One annotated feature with 1-based inclusive coordinates."""

    id: str
    type: str
    chromosome: str
    start: int
    end: int
    strand: int
    qualifiers: tuple[tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        q = dict(self.qualifiers)
        # /label last: callbench's GenBank export names user annotations with it.
        return (
            q.get("gene")
            or q.get("operon")
            or q.get("Name")
            or q.get("locus_tag")
            or q.get("label")
            or self.id
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON form used in tool results and snapshots."""
        return {
            "id": self.id,
            "type": self.type,
            "name": self.name,
            "chromosome": self.chromosome,
            "start": self.start,
            "end": self.end,
            "strand": "+" if self.strand >= 0 else "-",
            **dict(self.qualifiers),
        }


@dataclass(frozen=True, eq=False)  # identity hashing: parsed genomes are cached singletons
class Genome:
    """A parsed genome: chromosome sequences and their features."""

    name: str
    path: str
    sequences: dict[str, str]
    features: tuple[Feature, ...] = field(default=())
    organism: str = ""


@lru_cache(maxsize=16)
def _parse_cached(path: str, mtime: float) -> Genome:
    from Bio import SeqIO

    suffix = Path(path).suffix.lower()
    fmt = "genbank" if suffix in (".gb", ".gbk", ".genbank") else "fasta"
    try:
        records = list(SeqIO.parse(path, fmt))
    except (ValueError, OSError) as exc:
        raise ToolError(f"{Path(path).name}: cannot parse as {fmt}: {exc}") from None
    if not records:
        raise ToolError(f"{Path(path).name}: no sequence records found")
    sequences = {r.id: str(r.seq).upper() for r in records}
    features: list[Feature] = []
    for record in records:
        for i, f in enumerate(record.features):
            if f.type == "source":
                continue
            quals = tuple((k, str(v[0])) for k, v in f.qualifiers.items() if v)
            features.append(
                Feature(
                    f"{record.id}_f{i:03d}",
                    f.type,
                    record.id,
                    int(f.location.start) + 1,
                    int(f.location.end),
                    int(f.location.strand or 1),
                    quals,
                )
            )
    organism = str(records[0].annotations.get("organism", ""))
    return Genome(Path(path).stem, path, sequences, tuple(features), organism)


def parse_genome(path: Path) -> Genome:
    """Parse a GenBank or FASTA file (cached by path and modification time)."""
    if not path.is_file():
        raise ToolError(f"genome file not found: {path.name}")
    return _parse_cached(str(path.resolve()), path.stat().st_mtime)


@lru_cache(maxsize=16)
def feature_dicts(genome: Genome) -> tuple[dict[str, Any], ...]:
    """JSON forms of a genome's features, built once per genome. Shared: callers must not mutate them."""
    return tuple(f.as_dict() for f in genome.features)


def default_genome() -> Genome:
    """The bundled synthetic genome."""
    return parse_genome(data_dir() / DEFAULT_GENOME)
