"""Local BLAST-like similarity search against databases built from the loaded genome.

Alignment is Biopython's ``PairwiseAligner`` (local mode); nucleotide searches are seeded with
11-mers so a 120 kb genome is searched in milliseconds. E-values use Karlin-Altschul statistics
with the usual BLAST defaults for the scoring systems (an approximation, documented as such).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from Bio.Align import PairwiseAligner, substitution_matrices
from Bio.Seq import Seq

from callbench.benchmarks.genomics.tools._spec import FILE, boolean, enum, integer, number, string, tool
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

CAT = "blast_local"
DB = string("BLAST database name")
KARLIN = {"nucl": (1.28, 0.46), "prot": (0.267, 0.041)}
AA_ONLY = set("EFIJLOPQZ")


@lru_cache(maxsize=2)
def aligner(kind: str) -> PairwiseAligner:
    al = PairwiseAligner(mode="local")
    if kind == "prot":
        al.substitution_matrix = substitution_matrices.load("BLOSUM62")
        al.open_gap_score, al.extend_gap_score = -11, -1
    else:
        al.match_score, al.mismatch_score = 1, -2
        al.open_gap_score, al.extend_gap_score = -5, -2
    return al


def foreign_letters(query: str, kind: str) -> str:
    """The query's letters the aligner cannot score (sorted, once each): only a substitution matrix
    (proteins, BLOSUM62) limits them; nucleotides are scored by match and mismatch, any letter."""
    matrix = aligner(kind).substitution_matrix
    return "".join(sorted(set(query) - set(matrix.alphabet))) if matrix is not None else ""


def detect_type(sequence: str) -> str:
    seq = sequence.upper().replace(" ", "")
    if not seq:
        raise ToolError("empty sequence")
    return "prot" if set(seq) & AA_ONLY or sum(seq.count(b) for b in "ACGTN") / len(seq) < 0.9 else "nucl"


def genome_db(ws: Workspace, kind: str) -> list[tuple[str, str]]:
    """(id, sequence) entries of a database built from the loaded genome."""
    if kind == "nucl":
        return list(ws.sequences.items())
    out = []
    for f in ws.features():
        if f["type"] == "CDS":
            dna = ws.subseq(f["chromosome"], f["start"], f["end"])
            dna = dna if f["strand"] == "+" else str(Seq(dna).reverse_complement())
            out.append((f["name"], str(Seq(dna).translate(table=11, to_stop=True))))
    return out


def _add_db(
    ws: Workspace, name: str, kind: str, entries: list[tuple[str, str]], source: str
) -> dict[str, Any]:
    if not entries:
        raise ToolError("no sequences to put in the database")
    ws.blast_dbs[name] = {"type": kind, "entries": entries, "source": source}
    return {
        "dbName": name,
        "type": "protein" if kind == "prot" else "nucleotide",
        "sequences": len(entries),
        "letters": sum(len(s) for _, s in entries),
    }


@tool(
    CAT,
    "Create a BLAST database from a FASTA file in the working directory.",
    params={
        "dbName": DB,
        "fastaFile": FILE,
        "dbType": enum("Database type", ["nucleotide", "protein"], default="nucleotide"),
    },
    required=("dbName", "fastaFile"),
    keywords=("makeblastdb", "build database"),
)
def blast_create_database(
    ws: Workspace, dbName: str, fastaFile: str, dbType: str = "nucleotide"
) -> dict[str, Any]:
    entries: list[tuple[str, str]] = []
    header: str | None = None
    chunks: list[str] = []
    for line in ws.read_text(fastaFile).splitlines():
        if line.startswith(">"):
            if header is not None:
                entries.append((header, "".join(chunks).upper()))
            header, chunks = line[1:].split()[0] if line[1:].split() else "seq", []
        elif line.strip():
            chunks.append(line.strip())
    if header is not None:
        entries.append((header, "".join(chunks).upper()))
    return _add_db(ws, dbName, "prot" if dbType == "protein" else "nucl", entries, fastaFile)


@tool(
    CAT,
    "Create a nucleotide BLAST database from the loaded genome's chromosomes.",
    params={"dbName": DB},
    required=("dbName",),
    equivalent_to=("blast_create_quick_db_for_current_genome",),
    keywords=("genome database", "makeblastdb"),
)
def blast_create_db_from_genome(ws: Workspace, dbName: str) -> dict[str, Any]:
    return _add_db(ws, dbName, "nucl", genome_db(ws, "nucl"), "genome")


@tool(
    CAT,
    "One-step nucleotide database of the current genome, named <genome>_nt unless dbName is given.",
    params={"dbName": DB},
    keywords=("quick database", "current genome"),
)
def blast_create_quick_db_for_current_genome(ws: Workspace, dbName: str | None = None) -> dict[str, Any]:
    return _add_db(
        ws,
        dbName or f"{ws.genome.name if ws.genome else 'genome'}_nt",
        "nucl",
        genome_db(ws, "nucl"),
        "genome",
    )


@tool(
    CAT,
    "Create a protein BLAST database from the translated CDS features of the loaded genome.",
    params={"dbName": DB},
    required=("dbName",),
    keywords=("proteome database", "protein db"),
)
def blast_create_protein_db_from_genome(ws: Workspace, dbName: str) -> dict[str, Any]:
    return _add_db(ws, dbName, "prot", genome_db(ws, "prot"), "genome CDS")


@tool(CAT, "List local BLAST databases.", read_only=True, keywords=("databases available",))
def blast_list_databases(ws: Workspace) -> dict[str, Any]:
    return {
        "databases": [
            {
                "dbName": n,
                "type": "protein" if d["type"] == "prot" else "nucleotide",
                "sequences": len(d["entries"]),
            }
            for n, d in ws.blast_dbs.items()
        ]
    }


def _db(ws: Workspace, name: str) -> dict[str, Any]:
    if name not in ws.blast_dbs:
        raise ToolError(f"no BLAST database {name!r}; databases: {', '.join(ws.blast_dbs) or 'none'}")
    return ws.blast_dbs[name]


@tool(
    CAT,
    "Check that a local database exists and is readable.",
    params={"dbName": DB},
    required=("dbName",),
    read_only=True,
    keywords=("check database", "verify"),
)
def blast_validate_database(ws: Workspace, dbName: str) -> dict[str, Any]:
    db = _db(ws, dbName)
    return {"dbName": dbName, "valid": True, "sequences": len(db["entries"])}


@tool(
    CAT,
    "Delete a local BLAST database.",
    params={"dbName": DB},
    required=("dbName",),
    keywords=("remove database",),
)
def blast_delete_database(ws: Workspace, dbName: str) -> dict[str, Any]:
    _db(ws, dbName)
    del ws.blast_dbs[dbName]
    return {"deleted": dbName}


def search(
    entries: list[tuple[str, str]], query: str, kind: str, evalue: float, max_hits: int
) -> list[dict[str, Any]]:
    """Score the query against every entry (seeded for nucleotides) and keep hits under ``evalue``.

    Nucleotide queries are searched on both strands, as blastn does: the reverse complement of the
    query is aligned too and its hits carry ``strand: "minus"``. Coordinates stay 1-based with
    ``subjectStart <= subjectEnd`` on either strand; protein hits have no strand.
    """
    foreign = foreign_letters(query, kind)
    if foreign:  # letters the scoring has no score for: a bad query, the caller's mistake
        what = "amino acids" if kind == "prot" else "nucleotides"
        raise ToolError(f"the query has letters that are not {what}: {foreign}")
    strands = [("plus", query)]
    if kind == "nucl":
        strands.append(("minus", str(Seq(query).reverse_complement())))
    db_len = sum(len(s) for _, s in entries)
    hits = []
    for sid, subject in entries:
        for strand, oriented in strands:
            for hit in _hits_on(oriented, sid, subject, kind, db_len, evalue):
                hits.append(hit if kind == "prot" else {**hit, "strand": strand})
    hits.sort(key=lambda h: (h["evalue"], -h["score"]))
    return hits[:max_hits]


def _hits_on(
    query: str, sid: str, subject: str, kind: str, db_len: int, evalue: float
) -> list[dict[str, Any]]:
    """Hits of one query orientation against one subject, within ``evalue``."""
    al = aligner(kind)
    lam, k = KARLIN[kind]
    out = []
    for s_from, s_to in _windows(query, subject, kind):
        alignments = al.align(query, subject[s_from:s_to])
        if alignments.score <= 0:  # no local alignment scores above zero: nothing to report here
            continue
        aln = alignments[0]
        bits = (lam * aln.score - math.log(k)) / math.log(2)
        e = len(query) * db_len * 2**-bits
        if e <= evalue:
            s_begin, s_end = int(aln.aligned[1][0][0]), int(aln.aligned[1][-1][1])
            ident = sum(a == b for a, b in zip(aln[0], aln[1], strict=False))
            out.append(
                {
                    "subject": sid,
                    "score": float(aln.score),
                    "bits": round(bits, 1),
                    "evalue": float(f"{e:.3g}"),
                    "identity": round(100 * ident / aln.shape[1], 1),
                    "alignmentLength": int(aln.shape[1]),
                    "subjectStart": s_from + s_begin + 1,
                    "subjectEnd": s_from + s_end,
                }
            )
    return out


def _windows(query: str, subject: str, kind: str) -> list[tuple[int, int]]:
    """Subject windows worth aligning: the whole subject when it is a protein or short, else the regions
    around 11-mers shared with this orientation of the query (the caller passes each strand)."""
    if kind == "prot" or len(subject) <= 4 * len(query):
        return [(0, len(subject))]
    kmers = {query[i : i + 11] for i in range(len(query) - 10)}
    anchors: list[int] = []
    for kmer in kmers:
        p = subject.find(kmer)
        while p >= 0 and len(anchors) < 200:
            anchors.append(p)
            p = subject.find(kmer, p + 1)
    out: list[tuple[int, int]] = []
    for p in sorted(anchors):
        lo, hi = max(0, p - len(query)), min(len(subject), p + 2 * len(query))
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


@tool(
    CAT,
    "Search a local database (blastn for DNA, both strands; blastp for protein). Nucleotide hits give "
    "strand plus/minus with subjectStart <= subjectEnd. Results are kept for filtering/export.",
    params={
        "sequence": string("Query sequence", minLength=5),
        "database": DB,
        "blastType": enum("Program", ["blastn", "blastp", "blastx", "tblastn"], default="blastn"),
        "evalue": number("E-value cutoff", default=10, minimum=0),
        "maxHits": integer("Maximum hits", default=10, minimum=1),
    },
    required=("sequence", "database"),
    read_only=True,
    keywords=("similarity search", "homology", "align"),
    alternative_keys={"database": [["dbName"]]},
    result={"resultId": string("Stored result id")},
)
def blast_search_local(
    ws: Workspace,
    sequence: str,
    database: str,
    blastType: str = "blastn",
    evalue: float = 10,
    maxHits: int = 10,
) -> dict[str, Any]:
    db = _db(ws, database)
    query = sequence.upper().replace(" ", "").replace("\n", "")
    qkind = detect_type(query)
    if (db["type"], qkind) not in (("nucl", "nucl"), ("prot", "prot")):
        raise ToolError(f"{blastType}: query is {qkind} but database {database!r} is {db['type']}")
    matrix = aligner(db["type"]).substitution_matrix
    foreign = sorted(set(query) - set(matrix.alphabet)) if matrix is not None else []
    if foreign:  # letters BLOSUM62 has no score for: a bad query, the caller's mistake
        raise ToolError(f"{blastType}: the query has letters that are not amino acids: {''.join(foreign)}")
    hits = search(db["entries"], query, db["type"], evalue, maxHits)
    return _store(ws, {"program": blastType, "database": database, "queryLength": len(query), "hits": hits})


def _store(ws: Workspace, result: dict[str, Any]) -> dict[str, Any]:
    rid = ws.next_id("blast_result")
    ws.blast_results[rid] = result
    return {"resultId": rid, **result, "hitCount": len(result["hits"])}


@tool(
    CAT,
    "Guess whether a sequence is nucleotide or protein and suggest the BLAST program.",
    params={"sequence": string("Sequence", minLength=1)},
    required=("sequence",),
    read_only=True,
    keywords=("dna or protein", "sequence type"),
)
def blast_detect_sequence_type(ws: Workspace, sequence: str) -> dict[str, Any]:
    kind = detect_type(sequence)
    return {
        "type": "protein" if kind == "prot" else "nucleotide",
        "suggestedProgram": "blastp" if kind == "prot" else "blastn",
    }


@tool(
    CAT,
    "Filter a stored BLAST result by identity and E-value.",
    params={
        "resultId": string("Result id from a search"),
        "minIdentity": number("Minimum % identity", default=0),
        "maxEvalue": number("Maximum E-value", default=10),
    },
    required=("resultId",),
    read_only=True,
    keywords=("filter hits", "threshold"),
    result={"resultId": string("Id of the stored filtered result")},
)
def blast_filter_results(
    ws: Workspace, resultId: str, minIdentity: float = 0, maxEvalue: float = 10
) -> dict[str, Any]:
    if resultId not in ws.blast_results:
        raise ToolError(f"no BLAST result {resultId!r}")
    res = ws.blast_results[resultId]
    hits = [h for h in res["hits"] if h["identity"] >= minIdentity and h["evalue"] <= maxEvalue]
    return _store(ws, {**res, "hits": hits, "filteredFrom": resultId})


@tool(
    CAT,
    "Write a stored BLAST result to a file (tabular like outfmt 6, minus-strand hits end first; or JSON).",
    params={
        "resultId": string("Result id"),
        "filename": FILE,
        "format": enum("Format", ["tabular", "json"], default="tabular"),
    },
    required=("resultId", "filename"),
    keywords=("save hits", "export blast"),
    result={"filePath": string("Written file")},
)
def blast_export_results(
    ws: Workspace, resultId: str, filename: str, format: str = "tabular"
) -> dict[str, Any]:
    if resultId not in ws.blast_results:
        raise ToolError(f"no BLAST result {resultId!r}")
    import json

    hits = ws.blast_results[resultId]["hits"]
    if format == "json":
        text = json.dumps(hits, indent=1) + "\n"
    else:
        text = "".join(_tabular_row(h) for h in hits)
    return {"filePath": ws.write_file(filename, text), "hits": len(hits)}


def _tabular_row(hit: dict[str, Any]) -> str:
    """One outfmt-6-like line; as in BLAST's tabular output, a minus-strand hit is written end first."""
    s_start, s_end = hit["subjectStart"], hit["subjectEnd"]
    if hit.get("strand") == "minus":
        s_start, s_end = s_end, s_start
    return (
        f"query\t{hit['subject']}\t{hit['identity']}\t{hit['alignmentLength']}\t{s_start}\t{s_end}\t"
        f"{hit['evalue']}\t{hit['bits']}\n"
    )


@tool(
    "system_ui",
    "Whether the local BLAST engine is available (the built-in aligner always is).",
    read_only=True,
    params={"verbose": boolean("Include engine details", default=False)},
    keywords=("blast installed", "check installation"),
)
def blast_get_installation_status(ws: Workspace, verbose: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"installed": True, "engine": "callbench local aligner"}
    if verbose:
        out["details"] = "Biopython PairwiseAligner, 11-mer seeding, Karlin-Altschul E-values"
    return out
