"""Searching the genome: features by text, sequence patterns and motifs, repeats, variants."""

from __future__ import annotations

import re
from typing import Any

from Bio.Seq import Seq

from callbench.benchmarks.genomics.tools._spec import CHROM, END, START, boolean, integer, string, tool
from callbench.benchmarks.genomics.tools.sequence import clean_dna
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

CAT = "search"
IUPAC = {
    "A": "A",
    "C": "C",
    "G": "G",
    "T": "T",
    "R": "[AG]",
    "Y": "[CT]",
    "S": "[GC]",
    "W": "[AT]",
    "K": "[GT]",
    "M": "[AC]",
    "B": "[CGT]",
    "D": "[AGT]",
    "H": "[ACT]",
    "V": "[ACG]",
    "N": "[ACGT]",
}


@tool(
    CAT,
    "Search gene and feature names, products and notes for a text.",
    params={
        "query": string("Text to look for, e.g. polymerase"),
        "caseSensitive": boolean("Match case exactly", default=False),
    },
    required=("query",),
    read_only=True,
    keywords=("find genes", "lookup", "search"),
)
def search_features(ws: Workspace, query: str, caseSensitive: bool = False) -> dict[str, Any]:
    def norm(text: str) -> str:
        return text if caseSensitive else text.lower()

    q = norm(query)
    hits = [
        {
            "name": f["name"],
            "type": f["type"],
            "chromosome": f["chromosome"],
            "start": f["start"],
            "end": f["end"],
            "product": f.get("product", ""),
        }
        for f in ws.features()
        if f["type"] in ("CDS", "operon", "promoter", "repeat_region", "misc_feature", "regulatory_region")
        and any(q in norm(str(f.get(k, ""))) for k in ("name", "product", "note", "description"))
    ]
    return {"results": hits, "count": len(hits)}


def _pattern_hits(seq: str, regex: str, offset: int, both: bool, limit: int = 500) -> list[dict[str, Any]]:
    out = [
        {
            "start": offset + m.start(),
            "end": offset + m.start() + len(m.group(1)) - 1,
            "strand": "+",
            "match": m.group(1),
        }
        for m in re.finditer(f"(?=({regex}))", seq)
    ]
    if both:
        rc = str(Seq(seq).reverse_complement())
        out += [
            {
                "start": offset + len(seq) - m.start() - len(m.group(1)),
                "end": offset + len(seq) - m.start() - 1,
                "strand": "-",
                "match": m.group(1),
            }
            for m in re.finditer(f"(?=({regex}))", rc)
        ]
    return sorted(out, key=lambda h: (h["start"], h["strand"]))[:limit]


@tool(
    CAT,
    "Find a DNA pattern (IUPAC codes allowed, e.g. GAATTC or TTGACW) in a region or the whole chromosome.",
    params={
        "pattern": string("Pattern in IUPAC nucleotide codes", minLength=2),
        "chromosome": CHROM,
        "start": START,
        "end": END,
        "bothStrands": boolean("Search both strands", default=True),
    },
    required=("pattern",),
    read_only=True,
    keywords=("pattern", "IUPAC", "occurrences"),
)
def search_pattern(
    ws: Workspace,
    pattern: str,
    chromosome: str | None = None,
    start: int | None = None,
    end: int | None = None,
    bothStrands: bool = True,
) -> dict[str, Any]:
    pat = pattern.upper().replace("U", "T")
    if any(c not in IUPAC for c in pat):
        raise ToolError("pattern must use IUPAC nucleotide codes")
    chrom = ws.chromosome(chromosome)
    s = start or 1
    e = end or len(ws.sequences[chrom])
    chrom, s, e = ws.region(chrom, s, e)
    hits = _pattern_hits(ws.subseq(chrom, s, e), "".join(IUPAC[c] for c in pat), s, bothStrands)
    return {"chromosome": chrom, "pattern": pat, "matches": hits, "count": len(hits)}


@tool(
    CAT,
    "Find an exact sequence motif (e.g. a Shine-Dalgarno AGGAGG) on both strands of the whole genome.",
    params={
        "motif": string("Motif in A/C/G/T", minLength=2),
        "maxResults": integer("Maximum hits returned", default=100, minimum=1),
    },
    required=("motif",),
    read_only=True,
    keywords=("motif", "binding site", "consensus"),
)
def search_sequence_motif(ws: Workspace, motif: str, maxResults: int = 100) -> dict[str, Any]:
    probe = clean_dna(motif)
    hits = []
    for chrom, seq in ws.sequences.items():
        hits += [
            {**h, "chromosome": chrom} for h in _pattern_hits(seq, re.escape(probe), 1, True, maxResults)
        ]
    return {"motif": probe, "matches": hits[:maxResults], "count": len(hits)}


@tool(
    CAT,
    "Find tandem repeats: a unit of 2-50 bp repeated at least minCopies times in a row.",
    params={
        "chromosome": CHROM,
        "start": START,
        "end": END,
        "minCopies": integer("Minimum consecutive copies", default=3, minimum=2),
        "maxUnit": integer("Largest repeat unit (bp)", default=40, minimum=2, maximum=50),
    },
    read_only=True,
    keywords=("tandem repeat", "microsatellite", "SSR"),
)
def find_repeats(
    ws: Workspace,
    chromosome: str | None = None,
    start: int | None = None,
    end: int | None = None,
    minCopies: int = 3,
    maxUnit: int = 40,
) -> dict[str, Any]:
    chrom = ws.chromosome(chromosome)
    chrom, s, e = ws.region(chrom, start or 1, end or len(ws.sequences[chrom]))
    seq = ws.subseq(chrom, s, e)
    # One left-to-right pass; the lazy unit makes each hit report its shortest repeating unit. A
    # repeat of minCopies copies of a 2 bp unit or longer cannot fit in fewer bases (and a count past
    # the regex engine's limit would raise): no pass is needed then.
    pattern = rf"([ACGT]{{2,{maxUnit}}}?)\1{{{minCopies - 1},}}"
    found = []
    for m in re.finditer(pattern, seq) if 2 * minCopies <= len(seq) else ():
        # Short units repeat by chance in random DNA; require 12 bp in total to call a repeat.
        if len(set(m.group(1))) > 1 and len(m.group(0)) >= 12:
            found.append(
                {
                    "start": s + m.start(),
                    "end": s + m.end() - 1,
                    "unit": m.group(1),
                    "copies": len(m.group(0)) // len(m.group(1)),
                }
            )
    return {
        "chromosome": chrom,
        "repeats": sorted(found, key=lambda f: f["start"])[:100],
        "count": len(found),
    }


@tool(
    CAT,
    "Variants (from a loaded VCF) inside a region (default: current view).",
    params={"chromosome": CHROM, "start": START, "end": END, "type": string("Variant type, e.g. SNV or INS")},
    read_only=True,
    keywords=("SNP", "mutations", "VCF"),
)
def list_variants_in_region(
    ws: Workspace,
    chromosome: str | None = None,
    start: int | None = None,
    end: int | None = None,
    type: str | None = None,
) -> dict[str, Any]:
    if not ws.variants:
        raise ToolError("no variant file is loaded; use load_variant_file first")
    chrom = ws.chromosome(chromosome)
    lo, hi = start or 1, end or len(ws.sequences[chrom])
    hits = [
        v
        for v in ws.variants
        if v["chromosome"] == chrom
        and lo <= v["position"] <= hi
        and (type is None or v["type"].lower() == type.lower())
    ]
    return {"variants": hits, "count": len(hits)}
