"""Primer design (primer3-py), primer properties, binding sites and the primer library."""

from __future__ import annotations

from typing import Any

import primer3
from Bio.Seq import Seq

from callbench.benchmarks.genomics.tools._spec import (
    CHROM,
    END,
    SEQ,
    START,
    boolean,
    integer,
    number,
    string,
    tool,
)
from callbench.benchmarks.genomics.tools.sequence import clean_dna, gc_fraction
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

CAT = "primer_design"
# One set of PCR conditions for every Tm and dG in this module (primer3's own defaults), so a primer
# gets the same Tm from design_primers, calculate_primer_properties and save_primer.
MONOVALENT_MM, DIVALENT_MM, DNTP_MM, OLIGO_NM = 50.0, 1.5, 0.6, 50.0
CONDITIONS_TEXT = (
    f"Tm by primer3 nearest-neighbour thermodynamics (SantaLucia) at {MONOVALENT_MM:g} mM Na+/K+, "
    f"{DIVALENT_MM:g} mM Mg2+, {DNTP_MM:g} mM dNTPs and {OLIGO_NM:g} nM oligo"
)
PRIMER = {
    "type": "object",
    "properties": {"sequence": SEQ, "tm": number("Tm"), "genomicStart": integer("1-based genomic start")},
}


def tm_conditions(monovalent_mm: float = MONOVALENT_MM, oligo_nm: float = OLIGO_NM) -> dict[str, Any]:
    """The conditions a Tm was computed for, as reported in tool results."""
    return {
        "monovalentMm": float(monovalent_mm),
        "divalentMm": DIVALENT_MM,
        "dntpMm": DNTP_MM,
        "oligoNm": float(oligo_nm),
        "method": "primer3 nearest-neighbour (SantaLucia 1998)",
    }


def _thermo(monovalent_mm: float = MONOVALENT_MM, oligo_nm: float = OLIGO_NM) -> dict[str, float]:
    """Keyword arguments of primer3's calc_* functions for these conditions."""
    return {"mv_conc": monovalent_mm, "dv_conc": DIVALENT_MM, "dntp_conc": DNTP_MM, "dna_conc": oligo_nm}


PRIMER3_MAX_INT = 2**31 - 1
"""primer3 reads its settings as C ints."""


@tool(
    CAT,
    "Design a PCR primer pair (primer3) amplifying a genome target region. " + CONDITIONS_TEXT + ".",
    params={
        "chromosome": CHROM,
        "targetStart": START,
        "targetEnd": END,
        "productMinSize": integer("Minimum product size (bp)", default=100, minimum=50),
        "productMaxSize": integer("Maximum product size (bp)", default=1000, minimum=60),
        "optimalTm": number("Optimal primer Tm (degrees C)", default=60, minimum=40, maximum=80),
        "primerLength": integer("Optimal primer length", default=20, minimum=15, maximum=35),
        "numPairs": integer("Number of pairs to return", default=3, minimum=1, maximum=10),
    },
    required=("targetStart", "targetEnd"),
    read_only=True,
    keywords=("PCR", "amplify", "oligo", "primer3"),
    result={"forward": PRIMER, "reverse": PRIMER, "productSize": integer("bp")},
)
def design_primers(
    ws: Workspace,
    targetStart: int,
    targetEnd: int,
    chromosome: str | None = None,
    productMinSize: int = 100,
    productMaxSize: int = 1000,
    optimalTm: float = 60,
    primerLength: int = 20,
    numPairs: int = 3,
) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, targetStart, targetEnd)
    if max(productMinSize, productMaxSize) > PRIMER3_MAX_INT:  # primer3 refuses larger with a ValueError
        raise ToolError(f"product sizes above {PRIMER3_MAX_INT:,} bp are not supported")
    if productMaxSize < e - s + 1:
        raise ToolError(f"productMaxSize {productMaxSize} is smaller than the target ({e - s + 1} bp)")
    flank = max(0, productMaxSize - (e - s + 1)) // 2 + 50
    ts = max(1, s - flank)
    te = min(len(ws.sequences[chrom]), e + flank)
    template = ws.subseq(chrom, ts, te)
    try:
        result = primer3.design_primers(
            {"SEQUENCE_ID": "target", "SEQUENCE_TEMPLATE": template, "SEQUENCE_TARGET": [s - ts, e - s + 1]},
            {
                "PRIMER_NUM_RETURN": numPairs,
                "PRIMER_OPT_TM": optimalTm,
                "PRIMER_MIN_TM": optimalTm - 3,
                "PRIMER_MAX_TM": optimalTm + 3,
                "PRIMER_OPT_SIZE": primerLength,
                "PRIMER_MIN_SIZE": max(15, primerLength - 3),
                "PRIMER_MAX_SIZE": min(35, primerLength + 3),
                "PRIMER_PRODUCT_SIZE_RANGE": [[productMinSize, productMaxSize]],
                "PRIMER_SALT_MONOVALENT": MONOVALENT_MM,
                "PRIMER_SALT_DIVALENT": DIVALENT_MM,
                "PRIMER_DNTP_CONC": DNTP_MM,
                "PRIMER_DNA_CONC": OLIGO_NM,
            },
        )
    except OSError as exc:  # primer3 reports impossible settings this way
        raise ToolError(f"primer3 rejected the request: {exc}") from None
    if not result.get("PRIMER_PAIR_NUM_RETURNED"):
        raise ToolError("primer3 found no acceptable pair: " + result.get("PRIMER_PAIR_EXPLAIN", ""))
    pairs = [_pair(result, i, ts) for i in range(result["PRIMER_PAIR_NUM_RETURNED"])]
    return {
        "chromosome": chrom,
        "target": {"start": s, "end": e},
        **pairs[0],
        "pairs": pairs,
        "tmConditions": tm_conditions(),
    }


def _pair(result: dict[str, Any], i: int, offset: int) -> dict[str, Any]:
    left, right = result[f"PRIMER_LEFT_{i}"], result[f"PRIMER_RIGHT_{i}"]
    return {
        "forward": {
            "sequence": result[f"PRIMER_LEFT_{i}_SEQUENCE"],
            "tm": round(result[f"PRIMER_LEFT_{i}_TM"], 2),
            "gcPercent": result[f"PRIMER_LEFT_{i}_GC_PERCENT"],
            "genomicStart": offset + left[0],
            "length": left[1],
        },
        "reverse": {
            "sequence": result[f"PRIMER_RIGHT_{i}_SEQUENCE"],
            "tm": round(result[f"PRIMER_RIGHT_{i}_TM"], 2),
            "gcPercent": result[f"PRIMER_RIGHT_{i}_GC_PERCENT"],
            "genomicStart": offset + right[0],
            "length": right[1],
        },
        "productSize": result[f"PRIMER_PAIR_{i}_PRODUCT_SIZE"],
        "penalty": round(result[f"PRIMER_PAIR_{i}_PENALTY"], 4),
    }


@tool(
    CAT,
    "Properties of a primer: length, GC%, Tm, hairpin and self-dimer dG. "
    + CONDITIONS_TEXT
    + " unless naConc / primerConc say otherwise: the conditions design_primers and save_primer use.",
    params={
        "sequence": SEQ,
        "naConc": number("Monovalent cation concentration (mM)", default=50, minimum=0),
        "primerConc": number("Primer (oligo) concentration (nM)", default=50, minimum=0),
    },
    required=("sequence",),
    read_only=True,
    keywords=("melting temperature", "Tm", "hairpin", "primer"),
    result={"tm": number("Tm"), "gcPercent": number("GC%")},
)
def calculate_primer_properties(
    ws: Workspace, sequence: str, naConc: float = MONOVALENT_MM, primerConc: float = OLIGO_NM
) -> dict[str, Any]:
    seq = clean_dna(sequence)
    if len(seq) > 60:
        raise ToolError("primers longer than 60 nt are not supported")
    thermo = _thermo(naConc, primerConc)
    return {
        "sequence": seq,
        "length": len(seq),
        "gcPercent": round(100 * gc_fraction(seq), 2),
        "tm": round(primer3.calc_tm(seq, **thermo), 2),
        "hairpinDg": round(primer3.calc_hairpin(seq, **thermo).dg / 1000, 2),
        "selfDimerDg": round(primer3.calc_homodimer(seq, **thermo).dg / 1000, 2),
        "gcClamp": seq[-2:].count("G") + seq[-2:].count("C"),
        "tmConditions": tm_conditions(naConc, primerConc),
    }


@tool(
    CAT,
    "Heterodimer dG and Tm of two primers (do they anneal to each other?). " + CONDITIONS_TEXT + ".",
    params={"primer1": SEQ, "primer2": SEQ},
    required=("primer1", "primer2"),
    read_only=True,
    keywords=("primer dimer", "cross-dimer"),
)
def check_primer_dimer(ws: Workspace, primer1: str, primer2: str) -> dict[str, Any]:
    res = primer3.calc_heterodimer(clean_dna(primer1), clean_dna(primer2), **_thermo())
    return {
        "dg": round(res.dg / 1000, 2),
        "tm": round(res.tm, 2),
        "structureFound": bool(res.structure_found),
        "risky": res.dg / 1000 < -9,
        "tmConditions": tm_conditions(),
    }


@tool(
    CAT,
    "Exact and near-exact binding sites of a primer on both strands of the loaded genome.",
    params={"sequence": SEQ, "maxMismatches": integer("Mismatches allowed", default=0, minimum=0, maximum=3)},
    required=("sequence",),
    read_only=True,
    keywords=("off-target", "primer binding", "specificity"),
)
def find_primer_binding_sites(ws: Workspace, sequence: str, maxMismatches: int = 0) -> dict[str, Any]:
    probe = clean_dna(sequence)
    hits = []
    for chrom, genome_seq in ws.sequences.items():
        for strand, query in (("+", probe), ("-", str(Seq(probe).reverse_complement()))):
            hits += [
                {
                    "chromosome": chrom,
                    "start": p + 1,
                    "end": p + len(query),
                    "strand": strand,
                    "mismatches": m,
                }
                for p, m in _scan(genome_seq, query, maxMismatches)
            ]
    return {"sites": hits[:100], "count": len(hits), "specific": len(hits) == 1}


def _scan(text: str, query: str, max_mm: int) -> list[tuple[int, int]]:
    """Positions where ``query`` matches ``text`` with at most ``max_mm`` mismatches."""
    if max_mm == 0:
        out, i = [], text.find(query)
        while i >= 0:
            out.append((i, 0))
            i = text.find(query, i + 1)
        return out
    # Pigeonhole: one of max_mm+1 query pieces must match exactly; verify around each seed hit.
    k = len(query) // (max_mm + 1)
    found: dict[int, int] = {}
    for piece in range(max_mm + 1):
        seed = query[piece * k : (piece + 1) * k]
        for p, _ in _scan(text, seed, 0):
            begin = p - piece * k
            if 0 <= begin <= len(text) - len(query) and begin not in found:
                mm = sum(a != b for a, b in zip(text[begin : begin + len(query)], query, strict=False))
                if mm <= max_mm:
                    found[begin] = mm
    return sorted(found.items())


@tool(
    CAT,
    "Save a primer to the primer library. Unless tm is given it is computed: " + CONDITIONS_TEXT + ".",
    params={
        "name": string("Primer name"),
        "sequence": SEQ,
        "notes": string("Notes"),
        "tm": number("Tm (degrees C), if known"),
    },
    required=("name", "sequence"),
    keywords=("store primer", "primer library", "add primer"),
)
def save_primer(
    ws: Workspace, name: str, sequence: str, notes: str = "", tm: float | None = None
) -> dict[str, Any]:
    seq = clean_dna(sequence)
    entry = {
        "name": name,
        "sequence": seq,
        "length": len(seq),
        "tm": tm if tm is not None else round(primer3.calc_tm(seq, **_thermo()), 2),
        "notes": notes,
    }
    ws.primers[name] = entry
    # A Tm given by the caller has unknown conditions: say so rather than claim ours.
    return {
        "saved": name,
        "primerCount": len(ws.primers),
        **entry,
        "tmConditions": tm_conditions() if tm is None else None,
    }


@tool(CAT, "List the primers in the primer library.", read_only=True, keywords=("saved primers",))
def list_primers(ws: Workspace) -> dict[str, Any]:
    return {"primers": list(ws.primers.values()), "count": len(ws.primers)}


@tool(
    CAT,
    "Delete primers from the library: the named ones, or all of them with confirm=true.",
    params={
        "names": {
            "type": "array",
            "items": string("Primer name"),
            "minItems": 1,
            "description": "Primers to delete",
        },
        "confirm": boolean("Required to delete the whole library", default=False),
    },
    keywords=("remove primers", "clear primers"),
)
def delete_primers(ws: Workspace, names: list[str] | None = None, confirm: bool = False) -> dict[str, Any]:
    if names:
        missing = [n for n in names if n not in ws.primers]
        if missing:
            raise ToolError(f"unknown primers: {', '.join(missing)}")
        for primer in names:
            del ws.primers[primer]
        return {"deleted": names, "remaining": len(ws.primers)}
    if not confirm:
        raise ToolError("deleting every primer needs confirm=true")
    n = len(ws.primers)
    ws.primers.clear()
    return {"deleted": n, "remaining": 0}
