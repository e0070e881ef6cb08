"""Restriction analysis (Biopython's REBASE tables), virtual digests and a simulated agarose gel."""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

from Bio import Restriction

# The batches by their defining module: the package re-exports them through a computed __all__,
# which type checkers cannot follow. The enzymes themselves are looked up by name on the package.
from Bio.Restriction.Restriction import AllEnzymes, CommOnly, RestrictionBatch
from Bio.Seq import Seq

from callbench.benchmarks.genomics.tools._spec import (
    CHROM,
    END,
    SEQ,
    START,
    array,
    boolean,
    integer,
    number,
    string,
    tool,
)
from callbench.benchmarks.genomics.tools.sequence import clean_dna
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

CAT = "restriction_gel"
MARKERS: dict[str, list[int]] = {
    "1kb_ladder": [10000, 8000, 6000, 5000, 4000, 3000, 2000, 1500, 1000, 500, 250],
    "100bp_ladder": [1500, 1000, 900, 800, 700, 600, 500, 400, 300, 200, 100],
    "lambda_hindiii": [23130, 9416, 6557, 4361, 2322, 2027, 564],
    "1kb_plus": [15000, 10000, 7000, 5000, 4000, 3000, 2000, 1500, 1000, 700, 500, 400, 300, 200, 75],
}
ENZYMES = array('Enzyme names, e.g. ["EcoRI", "BamHI"]', string("Enzyme"), minItems=1)


def enzyme(name: str) -> Any:
    """A Biopython enzyme by (case-insensitive) name."""
    for candidate in (name, name[:1].upper() + name[1:]):
        if candidate in AllEnzymes.elements():
            return getattr(Restriction, candidate)
    lowered = {e.lower(): e for e in AllEnzymes.elements()}
    if name.lower() in lowered:
        return getattr(Restriction, lowered[name.lower()])
    raise ToolError(f"unknown restriction enzyme {name!r}")


def _target(
    ws: Workspace, sequence: str | None, chromosome: str | None, start: int | None, end: int | None
) -> tuple[str, int, str]:
    """The DNA to cut: a given sequence, or a genome region (default: current view)."""
    if sequence:
        return clean_dna(sequence), 1, "input sequence"
    chrom, s, e = ws.region(chromosome, start, end)
    return ws.subseq(chrom, s, e), s, f"{chrom}:{s}-{e}"


@tool(
    CAT,
    "Find restriction sites of the given enzymes in a sequence or genome region (default: current view).",
    params={"enzymes": ENZYMES, "sequence": SEQ, "chromosome": CHROM, "start": START, "end": END},
    required=("enzymes",),
    read_only=True,
    keywords=("cut sites", "EcoRI", "BamHI", "recognition site"),
)
def find_restriction_sites(
    ws: Workspace,
    enzymes: list[str],
    sequence: str | None = None,
    chromosome: str | None = None,
    start: int | None = None,
    end: int | None = None,
) -> dict[str, Any]:
    dna, offset, label = _target(ws, sequence, chromosome, start, end)
    batch = RestrictionBatch([enzyme(n) for n in enzymes])
    found = batch.search(Seq(dna), linear=True)
    sites = {str(e): [offset + p - 1 for p in sorted(pos)] for e, pos in found.items()}
    return {"target": label, "sites": sites, "totalSites": sum(len(v) for v in sites.values())}


@tool(
    CAT,
    "Virtual digest: fragment sizes after cutting a sequence or region with one or more enzymes.",
    params={
        "enzymes": ENZYMES,
        "sequence": SEQ,
        "chromosome": CHROM,
        "start": START,
        "end": END,
        "circular": boolean("Treat the DNA as circular", default=False),
    },
    required=("enzymes",),
    read_only=True,
    keywords=("digest", "fragments", "cut"),
    result={
        "fragments": array("Fragment sizes", integer("bp")),
        "fragmentDetails": array("Fragments", {"type": "object"}),
    },
)
def virtual_digest(
    ws: Workspace,
    enzymes: list[str],
    sequence: str | None = None,
    chromosome: str | None = None,
    start: int | None = None,
    end: int | None = None,
    circular: bool = False,
) -> dict[str, Any]:
    dna, offset, label = _target(ws, sequence, chromosome, start, end)
    batch = RestrictionBatch([enzyme(n) for n in enzymes])
    cuts = sorted({p - 1 for pos in batch.search(Seq(dna), linear=not circular).values() for p in pos})
    bounds = [0, *cuts, len(dna)] if not circular else cuts + [cuts[0] + len(dna)] if cuts else [0, len(dna)]
    details = []
    for a, b in pairwise(bounds):
        if b > a:
            details.append(
                {"start": offset + a % len(dna), "end": offset + (b - 1) % len(dna), "size": b - a}
            )
    sizes = sorted((d["size"] for d in details), reverse=True)
    return {
        "target": label,
        "enzymes": enzymes,
        "cutPositions": [offset + c for c in cuts],
        "fragments": sizes,
        "fragmentDetails": details,
        "fragmentCount": len(sizes),
    }


@tool(
    CAT,
    "List restriction enzymes, optionally filtered by name prefix, site length and commercial availability.",
    params={
        "query": string("Name prefix, e.g. Eco"),
        "minRecognitionLength": integer("Minimum recognition-site length", minimum=1),
        "commercialOnly": boolean("Only commercially available enzymes", default=False),
        "limit": integer("Maximum number returned", default=50, minimum=1),
    },
    read_only=True,
    keywords=("enzymes available", "REBASE"),
)
def list_restriction_enzymes(
    ws: Workspace,
    query: str = "",
    minRecognitionLength: int = 1,
    commercialOnly: bool = False,
    limit: int = 50,
) -> dict[str, Any]:
    pool = CommOnly if commercialOnly else AllEnzymes
    names = sorted(
        n
        for n in pool.elements()
        if n.lower().startswith(query.lower()) and len(getattr(Restriction, n).site) >= minRecognitionLength
    )
    items = [{"name": n, "site": getattr(Restriction, n).site} for n in names[:limit]]
    return {"enzymes": items, "count": len(names)}


@tool(
    CAT,
    "Simulate agarose gel migration of DNA fragments next to a size marker.",
    params={
        "fragments": array(
            "Fragment sizes in bp (or fragment objects with a size)",
            {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "object"}]},
            minItems=1,
        ),
        "marker": string("Size marker, e.g. 1kb_ladder", default="1kb_ladder"),
        "agarosePercent": number("Gel percentage", default=1.0, minimum=0.3, maximum=3),
    },
    required=("fragments",),
    read_only=True,
    keywords=("gel electrophoresis", "bands", "agarose"),
)
def simulate_gel_electrophoresis(
    ws: Workspace, fragments: list[Any], marker: str = "1kb_ladder", agarosePercent: float = 1.0
) -> dict[str, Any]:
    if marker not in MARKERS:
        raise ToolError(f"unknown marker {marker!r}; markers: {', '.join(MARKERS)}")
    try:
        sizes = [int(f["size"]) if isinstance(f, dict) else int(f) for f in fragments]
    except (KeyError, TypeError, ValueError):
        raise ToolError("fragments must be sizes in bp or objects with a 'size'") from None

    def migration(bp: int) -> float:
        # Log-linear mobility model; denser gels retard large fragments more.
        return round(max(0.0, 100 - 22 * agarosePercent**0.5 * math.log10(max(bp, 10))), 1)

    bands = [{"size": s, "migrationMm": migration(s)} for s in sorted(sizes, reverse=True)]
    ladder = [{"size": s, "migrationMm": migration(s)} for s in MARKERS[marker]]
    return {
        "lanes": [
            {"lane": 1, "name": marker, "bands": ladder},
            {"lane": 2, "name": "sample", "bands": bands},
        ],
        "agarosePercent": agarosePercent,
    }


@tool(
    CAT,
    "List the DNA size markers (ladders) available for gel simulation.",
    read_only=True,
    keywords=("ladder", "marker"),
)
def list_dna_markers(ws: Workspace) -> dict[str, Any]:
    return {"markers": [{"name": n, "bands": len(b), "range": [min(b), max(b)]} for n, b in MARKERS.items()]}


@tool(
    CAT,
    "Band sizes of one DNA size marker.",
    params={"marker": string("Marker name, e.g. 100bp_ladder")},
    required=("marker",),
    read_only=True,
    keywords=("ladder bands",),
)
def get_dna_marker_info(ws: Workspace, marker: str) -> dict[str, Any]:
    if marker not in MARKERS:
        raise ToolError(f"unknown marker {marker!r}; markers: {', '.join(MARKERS)}")
    return {"marker": marker, "bands": MARKERS[marker]}
