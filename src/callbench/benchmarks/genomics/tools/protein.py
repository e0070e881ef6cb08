"""Protein and sequence properties (Biopython ProtParam and SeqUtils)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from Bio.SeqUtils import molecular_weight
from Bio.SeqUtils.ProtParam import ProteinAnalysis

from callbench.benchmarks.genomics.tools._spec import PROTEIN, enum, string, tool
from callbench.benchmarks.genomics.tools.sequence import clean_dna
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

CAT = "protein"
AA_RE = re.compile(r"^[ACDEFGHIKLMNPQRSTVWY]+$")


def clean_protein(seq: str) -> str:
    """Upper-case protein without whitespace or a trailing stop '*'."""
    out = re.sub(r"\s+", "", seq or "").upper().rstrip("*")
    if not out or not AA_RE.match(out):
        raise ToolError("protein sequence must use the 20 standard one-letter amino-acid codes")
    return out


@tool(
    CAT,
    "Molecular weight (Da) of a DNA or protein sequence.",
    params={
        "sequence": string("DNA or protein sequence", minLength=1),
        "type": enum("Sequence type", ["dna", "protein"], default="dna"),
    },
    required=("sequence",),
    read_only=True,
    keywords=("mass", "daltons", "kDa"),
    result={"molecularWeight": {"type": "number"}},
)
def calculate_molecular_weight(ws: Workspace, sequence: str, type: str = "dna") -> dict[str, Any]:
    if type == "protein":
        seq = clean_protein(sequence)
        mw = molecular_weight(seq, seq_type="protein")
    else:
        seq = clean_dna(sequence).replace("N", "")
        mw = molecular_weight(seq, seq_type="DNA", double_stranded=False)
    return {"molecularWeight": round(mw, 2), "kDa": round(mw / 1000, 3), "length": len(seq), "type": type}


@tool(
    CAT,
    "Isoelectric point (pI) of a protein.",
    params={"sequence": PROTEIN},
    required=("sequence",),
    read_only=True,
    keywords=("pI", "charge", "isoelectric"),
    result={"pI": {"type": "number"}},
)
def calculate_isoelectric_point(ws: Workspace, sequence: str) -> dict[str, Any]:
    seq = clean_protein(sequence)
    return {"pI": round(ProteinAnalysis(seq).isoelectric_point(), 2), "length": len(seq)}


@tool(
    CAT,
    "Protein properties: length, weight, pI, GRAVY hydropathy, instability and aromaticity.",
    params={"sequence": PROTEIN},
    required=("sequence",),
    read_only=True,
    keywords=("ProtParam", "hydrophobicity", "GRAVY", "instability", "stability"),
)
def analyze_protein_properties(ws: Workspace, sequence: str) -> dict[str, Any]:
    seq = clean_protein(sequence)
    pa = ProteinAnalysis(seq)
    return {
        "length": len(seq),
        "molecularWeight": round(pa.molecular_weight(), 2),
        "pI": round(pa.isoelectric_point(), 2),
        "gravy": round(pa.gravy(), 4),
        "instabilityIndex": round(pa.instability_index(), 2),
        "aromaticity": round(pa.aromaticity(), 4),
        "stable": pa.instability_index() < 40,
    }


@tool(
    CAT,
    "Amino-acid composition (percent of each residue) of a protein.",
    params={"sequence": PROTEIN},
    required=("sequence",),
    read_only=True,
    keywords=("residue frequency", "composition"),
)
def amino_acid_composition(ws: Workspace, sequence: str) -> dict[str, Any]:
    seq = clean_protein(sequence)
    counts = Counter(seq)
    return {
        "length": len(seq),
        "percent": {aa: round(100 * n / len(seq), 2) for aa, n in sorted(counts.items())},
    }
