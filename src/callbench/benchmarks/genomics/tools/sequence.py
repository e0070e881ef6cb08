"""Sequence retrieval and analysis: subsequences, reverse complement, translation, GC, entropy, ORFs."""

from __future__ import annotations

import math
import re
from collections import Counter
from itertools import accumulate
from typing import Any

from Bio.Data import CodonTable
from Bio.Seq import Seq

from callbench.benchmarks.genomics.tools._spec import (
    CHROM,
    END,
    SEQ,
    START,
    boolean,
    enum,
    integer,
    string,
    tool,
)
from callbench.benchmarks.genomics.tools.navigation import find_feature
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

CAT = "sequence"
DNA_RE = re.compile(r"^[ACGTN]+$")


def clean_dna(seq: str) -> str:
    """Upper-case, whitespace-free DNA; anything but ACGTN is a tool error."""
    out = re.sub(r"\s+", "", seq or "").upper().replace("U", "T")
    if not out or not DNA_RE.match(out):
        raise ToolError("sequence must contain only A, C, G, T or N")
    return out


def gc_fraction(seq: str) -> float:
    acgt = sum(seq.count(b) for b in "ACGT")
    return (seq.count("G") + seq.count("C")) / acgt if acgt else 0.0


def translate(dna: str, frame: int = 1, table: int = 11, to_stop: bool = False) -> str:
    """Translate from a 1-based forward frame (1-3) or reverse frame (-1..-3)."""
    if table not in CodonTable.unambiguous_dna_by_id:
        # NCBI retired or never assigned some ids inside the schema's 1-33 range (7, 8, 17-20...).
        known = ", ".join(str(i) for i in sorted(CodonTable.unambiguous_dna_by_id))
        raise ToolError(f"genetic code table {table} does not exist; NCBI tables: {known}")
    seq = Seq(dna if frame > 0 else str(Seq(dna).reverse_complement()))
    seq = seq[abs(frame) - 1 :]
    seq = seq[: len(seq) // 3 * 3]
    return str(seq.translate(table=table, to_stop=to_stop))


@tool(
    CAT,
    "DNA sequence of a region (1-based, inclusive). Defaults to the current view.",
    params={
        "chromosome": CHROM,
        "start": START,
        "end": END,
        "strand": enum("Strand to read", ["+", "-"], default="+"),
    },
    read_only=True,
    keywords=("fetch sequence", "bases", "nucleotides"),
    result={"sequence": SEQ, "length": integer("Length")},
)
def get_sequence(
    ws: Workspace,
    chromosome: str | None = None,
    start: int | None = None,
    end: int | None = None,
    strand: str = "+",
) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    if e - s + 1 > 50_000:
        raise ToolError("regions longer than 50 kb are not returned; export them to a file instead")
    seq = ws.subseq(chrom, s, e)
    if strand == "-":
        seq = str(Seq(seq).reverse_complement())
    return {"chromosome": chrom, "start": s, "end": e, "strand": strand, "sequence": seq, "length": len(seq)}


@tool(
    CAT,
    "Coding sequence (start to stop codon, in the gene's orientation) and protein of a gene.",
    params={"gene_name": string("Gene name or locus tag, e.g. lacZ")},
    required=("gene_name",),
    read_only=True,
    keywords=("CDS", "ORF of gene", "coding region"),
    result={"codingSequence": SEQ, "proteinSequence": string("Protein")},
)
def get_coding_sequence(ws: Workspace, gene_name: str) -> dict[str, Any]:
    feat = find_feature(ws, gene_name, ("CDS",))
    dna = ws.subseq(feat["chromosome"], feat["start"], feat["end"])
    if feat["strand"] == "-":
        dna = str(Seq(dna).reverse_complement())
    return {
        "gene": feat["name"],
        "chromosome": feat["chromosome"],
        "start": feat["start"],
        "end": feat["end"],
        "strand": feat["strand"],
        "codingSequence": dna,
        "proteinSequence": translate(dna, to_stop=True),
        "length": len(dna),
    }


@tool(
    CAT,
    "Reverse complement of a DNA sequence.",
    params={"sequence": SEQ},
    required=("sequence",),
    read_only=True,
    keywords=("complementary strand", "antisense", "revcomp"),
    result={"reverseComplement": SEQ},
)
def reverse_complement(ws: Workspace, sequence: str) -> dict[str, Any]:
    dna = clean_dna(sequence)
    return {"reverseComplement": str(Seq(dna).reverse_complement()), "length": len(dna)}


FRAME = enum("Reading frame: 1-3 forward, -1..-3 on the reverse strand", [1, 2, 3, -1, -2, -3], default=1)
TABLE = integer("NCBI genetic code table (11 bacterial, 1 standard)", default=11, minimum=1, maximum=33)


@tool(
    CAT,
    "Translate DNA to protein in any of the six reading frames.",
    params={
        "dna": SEQ,
        "reading_frame": FRAME,
        "genetic_code": TABLE,
        "to_stop": boolean("Stop at the first stop codon", default=False),
    },
    required=("dna",),
    read_only=True,
    equivalent_to=({"tool": "translate_sequence", "keys": {"dna": "sequence", "reading_frame": "frame"}},),
    keywords=("protein", "amino acids", "codons"),
    result={"protein": string("Protein")},
)
def translate_dna(
    ws: Workspace, dna: str, reading_frame: int = 1, genetic_code: int = 11, to_stop: bool = False
) -> dict[str, Any]:
    protein = translate(clean_dna(dna), reading_frame, genetic_code, to_stop)
    return {"protein": protein, "length": len(protein), "frame": reading_frame}


@tool(
    CAT,
    "Translate a DNA sequence (frame 1 by default) with the standard or bacterial code.",
    params={"sequence": SEQ, "frame": FRAME, "genetic_code": TABLE},
    required=("sequence",),
    read_only=True,
    equivalent_to=({"tool": "translate_dna", "keys": {"sequence": "dna", "frame": "reading_frame"}},),
    keywords=("protein", "amino acids"),
    result={"protein": string("Protein")},
)
def translate_sequence(
    ws: Workspace, sequence: str, frame: int = 1, genetic_code: int = 11
) -> dict[str, Any]:
    protein = translate(clean_dna(sequence), frame, genetic_code)
    return {"protein": protein, "length": len(protein), "frame": frame}


@tool(
    CAT,
    "GC content (percent) of a sequence given directly.",
    params={"sequence": SEQ},
    required=("sequence",),
    read_only=True,
    keywords=("GC percent", "GC percentage", "guanine cytosine"),
    result={"gcPercent": {"type": "number"}},
)
def compute_gc(ws: Workspace, sequence: str) -> dict[str, Any]:
    dna = clean_dna(sequence)
    return {"gcPercent": round(100 * gc_fraction(dna), 2), "length": len(dna)}


@tool(
    CAT,
    "GC content of a genome region, overall and per window (defaults to the current view).",
    params={
        "chromosome": CHROM,
        "start": START,
        "end": END,
        "window": integer("Window size for the profile", default=100, minimum=10),
    },
    read_only=True,
    keywords=("GC content of region", "GC profile"),
    result={"gcPercent": {"type": "number"}},
)
def calc_region_gc(
    ws: Workspace,
    chromosome: str | None = None,
    start: int | None = None,
    end: int | None = None,
    window: int = 100,
) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    seq = ws.subseq(chrom, s, e)
    profile = [round(100 * gc_fraction(seq[i : i + window]), 1) for i in range(0, len(seq), window)][:500]
    return {
        "chromosome": chrom,
        "start": s,
        "end": e,
        "gcPercent": round(100 * gc_fraction(seq), 2),
        "window": window,
        "profile": profile,
    }


@tool(
    CAT,
    "GC skew (G-C)/(G+C) per window over a region; cumulative skew hints at the replication origin.",
    params={
        "chromosome": CHROM,
        "start": START,
        "end": END,
        "window": integer("Window size", default=1000, minimum=10),
    },
    read_only=True,
    keywords=("skew", "origin of replication", "leading strand"),
)
def gc_skew(
    ws: Workspace,
    chromosome: str | None = None,
    start: int | None = None,
    end: int | None = None,
    window: int = 1000,
) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    seq = ws.subseq(chrom, s, e)
    values = []
    for i in range(0, len(seq), window):
        chunk = seq[i : i + window]
        g, c = chunk.count("G"), chunk.count("C")
        values.append(round((g - c) / (g + c), 4) if g + c else 0.0)
    cumulative = [round(total, 4) for total in accumulate(values)]
    return {
        "chromosome": chrom,
        "start": s,
        "end": e,
        "window": window,
        "skew": values[:500],
        "cumulative": cumulative[:500],
        "minCumulativeWindow": cumulative.index(min(cumulative)) + 1,
    }


@tool(
    CAT,
    "Shannon entropy (bits per base) of a sequence; low values flag repeats or low complexity.",
    params={"sequence": SEQ},
    required=("sequence",),
    read_only=True,
    keywords=("complexity", "information"),
    result={"entropy": {"type": "number"}},
)
def calculate_entropy(ws: Workspace, sequence: str) -> dict[str, Any]:
    dna = clean_dna(sequence)
    counts = Counter(dna)
    entropy = -sum(n / len(dna) * math.log2(n / len(dna)) for n in counts.values())
    return {"entropy": round(entropy, 4), "length": len(dna), "composition": dict(sorted(counts.items()))}


@tool(
    CAT,
    "Find open reading frames (ATG to stop) on both strands of a region.",
    params={
        "chromosome": CHROM,
        "start": START,
        "end": END,
        "minLength": integer("Minimum ORF length in codons", default=100, minimum=10),
    },
    read_only=True,
    keywords=("open reading frame", "gene prediction", "ORF"),
)
def find_orfs(
    ws: Workspace,
    chromosome: str | None = None,
    start: int | None = None,
    end: int | None = None,
    minLength: int = 100,
) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    seq = ws.subseq(chrom, s, e)
    orfs: list[dict[str, Any]] = []
    for strand, text in (("+", seq), ("-", str(Seq(seq).reverse_complement()))):
        for m in re.finditer(r"(?=(ATG(?:[ACGT]{3})*?(?:TAA|TAG|TGA)))", text):
            orf = m.group(1)
            if len(orf) // 3 >= minLength:
                a = m.start() if strand == "+" else len(text) - m.start() - len(orf)
                orfs.append(
                    {"start": s + a, "end": s + a + len(orf) - 1, "strand": strand, "codons": len(orf) // 3}
                )
    orfs = _drop_nested(orfs)
    return {"chromosome": chrom, "orfs": orfs[:200], "count": len(orfs)}


def _drop_nested(orfs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the longest ORF per stop codon (inner ATGs give nested copies)."""
    best: dict[tuple[str, int], dict[str, Any]] = {}
    for orf in orfs:
        key = (orf["strand"], orf["end"] if orf["strand"] == "+" else orf["start"])
        if key not in best or orf["codons"] > best[key]["codons"]:
            best[key] = orf
    return sorted(best.values(), key=lambda o: o["start"])


def codon_counts(dna: str) -> Counter[str]:
    return Counter(dna[i : i + 3] for i in range(0, len(dna) - 2, 3))


@tool(
    CAT,
    "Codon usage of a gene's coding sequence or of a DNA sequence given directly.",
    params={"geneName": string("Gene name"), "sequence": SEQ},
    any_of=(("geneName",), ("sequence",)),
    read_only=True,
    keywords=("codon bias", "codon frequency"),
)
def codon_usage_analysis(
    ws: Workspace, geneName: str | None = None, sequence: str | None = None
) -> dict[str, Any]:
    dna = get_coding_sequence(ws, geneName)["codingSequence"] if geneName else clean_dna(sequence or "")
    counts = codon_counts(dna)
    total = sum(counts.values())
    return {
        "codons": total,
        "usage": {c: round(n / total, 4) for c, n in sorted(counts.items())},
        "mostFrequent": [c for c, _ in counts.most_common(5)],
    }


@tool(
    CAT,
    "Codon usage over every annotated CDS of the genome.",
    read_only=True,
    params={"topN": integer("How many most frequent codons to list", default=10, minimum=1)},
    keywords=("genome-wide codon", "codon bias"),
)
def genome_codon_usage_analysis(ws: Workspace, topN: int = 10) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    genes = 0
    for feat in ws.features():
        if feat["type"] == "CDS":
            dna = ws.subseq(feat["chromosome"], feat["start"], feat["end"])
            counts.update(codon_counts(dna if feat["strand"] == "+" else str(Seq(dna).reverse_complement())))
            genes += 1
    total = sum(counts.values())
    return {
        "genes": genes,
        "codons": total,
        "top": [{"codon": c, "fraction": round(n / total, 4)} for c, n in counts.most_common(topN)],
    }


@tool(
    CAT,
    "Predict sigma70-like promoters (TTGACA, 15-19 bp spacer, TATAAT; up to one mismatch per box).",
    params={
        "chromosome": CHROM,
        "start": START,
        "end": END,
        "maxMismatches": integer("Mismatches allowed per box", default=1, minimum=0, maximum=2),
    },
    read_only=True,
    keywords=("-10 box", "-35 box", "transcription start", "promoter"),
)
def predict_promoter(
    ws: Workspace,
    chromosome: str | None = None,
    start: int | None = None,
    end: int | None = None,
    maxMismatches: int = 1,
) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    seq = ws.subseq(chrom, s, e)
    hits = []
    for strand, text in (("+", seq), ("-", str(Seq(seq).reverse_complement()))):
        for i in range(len(text) - 35):
            if _mismatches(text[i : i + 6], "TTGACA") > maxMismatches:
                continue
            for spacer in range(15, 20):
                j = i + 6 + spacer
                score = _mismatches(text[j : j + 6], "TATAAT")
                if score <= maxMismatches and j + 6 <= len(text):
                    pos = s + i if strand == "+" else s + len(text) - (j + 6)
                    hits.append(
                        {
                            "start": pos,
                            "end": pos + j + 5 - i,
                            "strand": strand,
                            "spacer": spacer,
                            "mismatches": _mismatches(text[i : i + 6], "TTGACA") + score,
                        }
                    )
    hits.sort(key=lambda h: (h["mismatches"], h["start"]))
    return {"chromosome": chrom, "promoters": hits[:50], "count": len(hits)}


def _mismatches(a: str, b: str) -> int:
    return sum(x != y for x, y in zip(a, b, strict=False)) + abs(len(a) - len(b))
