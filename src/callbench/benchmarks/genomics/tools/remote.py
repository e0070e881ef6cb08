"""Stand-ins for remote services (UniProt, InterPro, PDB, AlphaFold, NCBI BLAST).

Nothing here touches the network: answers come from ``data/protein_fixtures.json`` (built from the
bundled genome's proteins) or from a local search, and every description says so.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from callbench.benchmarks.genomics.genome import data_dir
from callbench.benchmarks.genomics.tools._spec import CHROM, END, START, enum, integer, string, tool
from callbench.benchmarks.genomics.tools.blast import _store, detect_type, genome_db, search
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

CAT = "remote_databases"
OFFLINE = " Benchmark mode: answered from a bundled offline fixture, not the live service."


@lru_cache(maxsize=1)
def fixtures() -> dict[str, dict[str, Any]]:
    return json.loads((data_dir() / "protein_fixtures.json").read_text())


def _entry(key: str) -> dict[str, Any]:
    """A fixture entry by gene name, accession or AlphaFold id (case-insensitive)."""
    k = key.strip().lower()
    for gene, entry in fixtures().items():
        if k in (gene.lower(), entry["accession"].lower(), entry["alphafold_id"].lower()):
            return entry
    raise ToolError(f"{key!r} not found in the offline fixture")


def _summary(e: dict[str, Any]) -> dict[str, Any]:
    return {k: e[k] for k in ("accession", "gene", "protein_name", "organism", "length")}


@tool(
    CAT,
    "Search UniProt by free text (gene, protein name)." + OFFLINE,
    params={
        "query": string("Search text, e.g. dnaK"),
        "organism": string("Organism filter"),
        "limit": integer("Maximum results", default=10, minimum=1),
    },
    required=("query",),
    read_only=True,
    keywords=("uniprot", "protein database", "swissprot"),
    result={
        "results": {
            "type": "array",
            "minItems": 1,
            "description": "Matching entries",
            "items": {
                "type": "object",
                "properties": {"accession": string("UniProt accession")},
                "required": ["accession"],
            },
        }
    },
)
def search_uniprot_database(
    ws: Workspace, query: str, organism: str | None = None, limit: int = 10
) -> dict[str, Any]:
    q = query.lower()
    hits = [
        _summary(e)
        for g, e in fixtures().items()
        if q in g.lower()
        or q in e["protein_name"].lower()
        and (organism is None or organism.lower() in e["organism"].lower())
    ]
    return {"results": hits[:limit], "count": len(hits), "source": "offline fixture"}


@tool(
    CAT,
    "UniProt search with separate gene, protein-name and organism fields." + OFFLINE,
    params={
        "geneName": string("Gene name"),
        "proteinName": string("Protein name"),
        "organism": string("Organism"),
        "reviewedOnly": {"type": "boolean", "default": True, "description": "Swiss-Prot entries only"},
    },
    any_of=(("geneName",), ("proteinName",)),
    read_only=True,
    keywords=("uniprot", "advanced search"),
)
def advanced_uniprot_search(
    ws: Workspace,
    geneName: str | None = None,
    proteinName: str | None = None,
    organism: str | None = None,
    reviewedOnly: bool = True,
) -> dict[str, Any]:
    hits = [
        _summary(e)
        for g, e in fixtures().items()
        if (geneName is None or g.lower() == geneName.lower())
        and (proteinName is None or proteinName.lower() in e["protein_name"].lower())
        and (organism is None or organism.lower() in e["organism"].lower())
    ]
    return {"results": hits, "count": len(hits), "source": "offline fixture"}


@tool(
    CAT,
    "Full UniProt entry (sequence, length, cross-references) by accession or gene." + OFFLINE,
    params={"uniprotId": string("UniProt accession (or gene name)")},
    required=("uniprotId",),
    read_only=True,
    keywords=("uniprot entry", "protein record"),
    result={"accession": string("Accession"), "sequence": string("Protein sequence")},
)
def get_uniprot_entry(ws: Workspace, uniprotId: str) -> dict[str, Any]:
    e = _entry(uniprotId)
    return {
        **_summary(e),
        "sequence": e["sequence"],
        "alphafold_id": e["alphafold_id"],
        "pdb_ids": e["pdb_ids"],
        "source": "offline fixture",
    }


@tool(
    CAT,
    "InterPro domain analysis of a protein (by sequence or UniProt accession)." + OFFLINE,
    params={
        "sequence": string("Protein sequence"),
        "uniprotId": string("UniProt accession"),
        "analysisType": enum("Depth", ["domains", "complete"], default="domains"),
    },
    any_of=(("sequence",), ("uniprotId",)),
    read_only=True,
    keywords=("domains", "interpro", "families"),
)
def analyze_interpro_domains(
    ws: Workspace, sequence: str | None = None, uniprotId: str | None = None, analysisType: str = "domains"
) -> dict[str, Any]:
    e: dict[str, Any] | None
    if uniprotId:
        e = _entry(uniprotId)
    else:
        seq = (sequence or "").upper()
        e = next((x for x in fixtures().values() if x["sequence"] == seq), None)
        if e is None:
            return {"domains": [], "note": "sequence not in the offline fixture", "source": "offline fixture"}
    out: dict[str, Any] = {"accession": e["accession"], "domains": e["interpro"], "source": "offline fixture"}
    if analysisType == "complete":
        out["length"] = e["length"]
    return out


@tool(
    CAT,
    "Search InterPro entries by text." + OFFLINE,
    params={
        "search_term": string("Search text"),
        "max_results": integer("Maximum results", default=5, minimum=1),
    },
    required=("search_term",),
    read_only=True,
    keywords=("interpro", "protein family"),
)
def search_interpro_entry(ws: Workspace, search_term: str, max_results: int = 5) -> dict[str, Any]:
    q = search_term.lower()
    hits = [d for e in fixtures().values() for d in e["interpro"] if q in d["name"].lower()]
    return {"results": hits[:max_results], "count": len(hits), "source": "offline fixture"}


@tool(
    CAT,
    "Details of one InterPro entry." + OFFLINE,
    params={"entryId": string("InterPro id, e.g. IPR100000")},
    required=("entryId",),
    read_only=True,
    keywords=("interpro entry",),
)
def get_interpro_entry_details(ws: Workspace, entryId: str) -> dict[str, Any]:
    for e in fixtures().values():
        for d in e["interpro"]:
            if d["id"].lower() == entryId.lower():
                return {**d, "proteins": [e["accession"]], "source": "offline fixture"}
    raise ToolError(f"InterPro entry {entryId!r} not in the offline fixture")


@tool(
    CAT,
    "Search PDB experimental structures for a gene." + OFFLINE,
    params={"geneName": string("Gene name"), "organism": string("Organism")},
    required=("geneName",),
    read_only=True,
    keywords=("crystal structure", "PDB", "3D"),
)
def search_pdb_structures(ws: Workspace, geneName: str, organism: str | None = None) -> dict[str, Any]:
    e = _entry(geneName)
    return {
        "gene": e["gene"],
        "structures": e["pdb_ids"],
        "count": len(e["pdb_ids"]),
        "source": "offline fixture",
    }


@tool(
    CAT,
    "Search AlphaFold predicted structures for a gene." + OFFLINE,
    params={"geneName": string("Gene name"), "organism": string("Organism")},
    required=("geneName",),
    read_only=True,
    keywords=("alphafold", "predicted structure"),
)
def search_alphafold_structures(ws: Workspace, geneName: str, organism: str | None = None) -> dict[str, Any]:
    e = _entry(geneName)
    return {
        "gene": e["gene"],
        "structures": [{"id": e["alphafold_id"], "uniprotId": e["accession"]}],
        "source": "offline fixture",
    }


def _write_structure(ws: Workspace, e: dict[str, Any], name: str) -> str:
    # A minimal CA-only PDB trace on a helix, enough for a viewer to open.
    lines = [f"HEADER    {e['protein_name'][:40]:<40}  OFFLINE FIXTURE"]
    for i, aa in enumerate(e["sequence"][:200]):
        x, y, z = 2.3 * (i % 4), 2.3 * ((i // 4) % 4), 1.5 * i
        lines.append(
            f"ATOM  {i + 1:5d}  CA  {_three(aa)} A{i + 1:4d}    {x:8.3f}{y:8.3f}{z:8.3f}"
            "  1.00 90.00           C"
        )
    return ws.write_file(f"structures/{name}.pdb", "\n".join(lines + ["END"]) + "\n")


def _three(aa: str) -> str:
    from Bio.SeqUtils import seq3

    return seq3(aa).upper()


@tool(
    CAT,
    "Download an AlphaFold model (PDB file) for a UniProt accession." + OFFLINE,
    params={"uniprotId": string("UniProt accession")},
    required=("uniprotId",),
    keywords=("alphafold model", "download structure"),
    result={"filePath": string("PDB file")},
)
def fetch_alphafold_structure(ws: Workspace, uniprotId: str) -> dict[str, Any]:
    e = _entry(uniprotId)
    return {
        "filePath": _write_structure(ws, e, e["alphafold_id"]),
        "structureId": e["alphafold_id"],
        "source": "offline fixture",
    }


@tool(
    CAT,
    "Download an experimental structure by PDB id." + OFFLINE,
    params={"pdbId": string("PDB id")},
    required=("pdbId",),
    keywords=("pdb download",),
    result={"filePath": string("PDB file")},
)
def fetch_protein_structure(ws: Workspace, pdbId: str) -> dict[str, Any]:
    e = next((x for x in fixtures().values() if pdbId.upper() in x["pdb_ids"]), None)
    if e is None:
        raise ToolError(f"PDB id {pdbId!r} not in the offline fixture")
    return {
        "filePath": _write_structure(ws, e, pdbId.upper()),
        "structureId": pdbId.upper(),
        "source": "offline fixture",
    }


@tool(
    CAT,
    "Open a structure (downloaded file or structure id) in the 3D protein viewer.",
    params={"structure": string("Structure file path or id")},
    required=("structure",),
    keywords=("3D viewer", "show structure"),
)
def open_protein_viewer(ws: Workspace, structure: str) -> dict[str, Any]:
    ws.ui["protein_viewer"] = structure
    return {"opened": structure}


@tool(
    CAT,
    "NCBI BLAST search against nr/nt." + OFFLINE + " The fixture searches the bundled genome instead.",
    params={
        "sequence": string("Query sequence", minLength=5),
        "database": enum("Remote database", ["nt", "nr", "refseq_protein", "swissprot"], default="nt"),
        "blastType": enum("Program", ["blastn", "blastp", "blastx", "tblastn"], default="blastn"),
        "maxHits": integer("Maximum hits", default=10, minimum=1),
    },
    required=("sequence",),
    read_only=True,
    equivalent_to=("blast_search_online",),
    long_running=True,
    keywords=("ncbi", "online blast", "homology"),
    result={"resultId": string("Stored result id")},
)
def blast_search(
    ws: Workspace, sequence: str, database: str = "nt", blastType: str = "blastn", maxHits: int = 10
) -> dict[str, Any]:
    query = sequence.upper().replace(" ", "")
    kind = detect_type(query)
    hits = search(genome_db(ws, kind), query, kind, 10.0, maxHits)
    return _store(
        ws,
        {
            "program": blastType,
            "database": database,
            "queryLength": len(query),
            "hits": hits,
            "source": "offline fixture (bundled genome)",
        },
    )


@tool(
    CAT,
    "Online BLAST (same service as blast_search)." + OFFLINE,
    params={
        "sequence": string("Query sequence", minLength=5),
        "database": enum("Remote database", ["nt", "nr", "refseq_protein", "swissprot"], default="nt"),
    },
    required=("sequence",),
    read_only=True,
    equivalent_to=("blast_search",),
    long_running=True,
    keywords=("ncbi", "web blast"),
)
def blast_search_online(ws: Workspace, sequence: str, database: str = "nt") -> dict[str, Any]:
    return blast_search(ws, sequence, database, "blastp" if detect_type(sequence) == "prot" else "blastn")


@tool(
    CAT,
    "BLAST a genome region against a remote database (long-running)." + OFFLINE,
    params={
        "chromosome": CHROM,
        "start": START,
        "end": END,
        "blastType": enum("Program", ["blastn", "blastx"], default="blastn"),
        "database": enum("Remote database", ["nt", "nr"], default="nt"),
    },
    required=("start", "end"),
    read_only=True,
    long_running=True,
    keywords=("blast region", "coordinates"),
)
def blast_sequence_from_region(
    ws: Workspace,
    start: int,
    end: int,
    chromosome: str | None = None,
    blastType: str = "blastn",
    database: str = "nt",
) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    if e - s + 1 > 5000:
        raise ToolError("regions longer than 5 kb are not accepted for remote BLAST")
    return blast_search(ws, ws.subseq(chrom, s, e), database, blastType)
