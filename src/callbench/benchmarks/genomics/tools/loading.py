"""File loading: genomes, annotations (GFF3/BED), variants (VCF), reads (SAM), WIG tracks, operon tables."""

from __future__ import annotations

from typing import Any

from callbench.benchmarks.genomics.tools._spec import FILE, array, tool
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

CAT = "file_loading"


def _lines(ws: Workspace, path: str) -> list[str]:
    text = ws.read_text(path)
    return [ln for ln in text.splitlines() if ln.strip()]


def _rows(ws: Workspace, path: str, header: str, min_cols: int, kind: str) -> list[list[str]]:
    """Tab-separated data rows (header lines skipped); a short row is a tool error naming the file."""
    rows = []
    for ln in _lines(ws, path):
        if ln.startswith(header):
            continue
        cols = ln.split("\t")
        if len(cols) < min_cols:
            raise ToolError(f"{path}: not a {kind} line: {ln[:40]!r}")
        rows.append(cols)
    return rows


@tool(
    CAT,
    "Load a genome from a GenBank (.gbk) or FASTA file; replaces the loaded genome.",
    params={"filePath": FILE},
    required=("filePath",),
    keywords=("open genome", "import genome", "GenBank"),
    alternative_keys={"filePath": [["path"]]},
    result={"chromosomes": {"type": "array"}},
)
def load_genome_file(ws: Workspace, filePath: str) -> dict[str, Any]:
    genome = ws.load_genome(ws.existing_file(filePath), filePath)
    return {
        "loaded": filePath,
        "chromosomes": [{"name": c, "length": len(s)} for c, s in genome.sequences.items()],
        "features": len(genome.features),
    }


@tool(
    CAT,
    "Load extra annotations from a GFF3 or BED file as user annotations.",
    params={"filePath": FILE},
    required=("filePath",),
    keywords=("GFF", "BED", "import features"),
)
def load_annotation_file(ws: Workspace, filePath: str) -> dict[str, Any]:
    try:
        return _load_annotations(ws, filePath)
    except (ValueError, IndexError):
        raise ToolError(f"{filePath}: malformed GFF3/BED coordinates") from None


def _load_annotations(ws: Workspace, filePath: str) -> dict[str, Any]:
    added: list[str] = []
    for ln in _lines(ws, filePath):
        if ln.startswith(("#", "track")):
            continue
        cols = ln.split("\t")
        if filePath.lower().endswith(".bed") and len(cols) >= 3:
            name = cols[3] if len(cols) > 3 else f"bed_{len(added) + 1}"
            ann: dict[str, Any] = {
                "type": "misc_feature",
                "name": name,
                "chromosome": cols[0],
                "start": int(cols[1]) + 1,
                "end": int(cols[2]),
                "strand": cols[5] if len(cols) > 5 else "+",
            }
        elif len(cols) >= 9:
            attrs = dict(kv.split("=", 1) for kv in cols[8].split(";") if "=" in kv)
            ann = {
                "type": cols[2],
                "name": attrs.get("Name", attrs.get("ID", cols[2])),
                "chromosome": cols[0],
                "start": int(cols[3]),
                "end": int(cols[4]),
                "strand": cols[6] if cols[6] in "+-" else "+",
                "description": attrs.get("note", ""),
            }
        else:
            raise ToolError(f"{filePath}: line {ln[:40]!r} is neither GFF3 nor BED")
        ann["id"] = ws.next_id("user", ann["name"])
        ann["source"] = filePath
        ws.annotations[ann["id"]] = ann
        added.append(ann["id"])
    ws.note_loaded("annotation", filePath, count=len(added))
    return {"loaded": filePath, "annotations": len(added)}


@tool(
    CAT,
    "Load variants from a VCF file (shown on the variants track).",
    params={"filePath": FILE},
    required=("filePath",),
    keywords=("VCF", "SNP", "mutations"),
)
def load_variant_file(ws: Workspace, filePath: str) -> dict[str, Any]:
    variants = []
    for cols in _rows(ws, filePath, "#", 8, "VCF data"):
        if not cols[1].isdigit():
            raise ToolError(f"{filePath}: VCF position {cols[1]!r} is not a number")
        info = dict(kv.split("=", 1) for kv in cols[7].split(";") if "=" in kv)
        variants.append(
            {
                "chromosome": cols[0],
                "position": int(cols[1]),
                "id": cols[2],
                "ref": cols[3],
                "alt": cols[4],
                "type": info.get("TYPE", "SNV"),
            }
        )
    ws.variants = variants
    ws.tracks["variants"] = True
    ws.note_loaded("variants", filePath, count=len(variants))
    return {"loaded": filePath, "variants": len(variants)}


@tool(
    CAT,
    "Load aligned reads from a SAM file (shown on the reads track).",
    params={"filePath": FILE},
    required=("filePath",),
    keywords=("alignments", "BAM", "SAM", "coverage"),
)
def load_reads_file(ws: Workspace, filePath: str) -> dict[str, Any]:
    rows = _rows(ws, filePath, "@", 11, "SAM alignment")
    reads, bases = len(rows), sum(len(cols[9]) for cols in rows)
    ws.reads = {"path": filePath, "reads": reads, "bases": bases}
    ws.tracks["reads"] = True
    ws.note_loaded("reads", filePath, count=reads)
    genome_length = max(1, sum(map(len, ws.sequences.values())))
    return {"loaded": filePath, "reads": reads, "meanCoverage": round(bases / genome_length, 4)}


@tool(
    CAT,
    "Load one or more WIG signal tracks.",
    params={
        "filePaths": {
            "anyOf": [FILE, array("Several WIG files", FILE, minItems=1)],
            "description": "A WIG file or a list of them",
        }
    },
    required=("filePaths",),
    keywords=("wiggle", "signal", "coverage track"),
)
def load_wig_tracks(ws: Workspace, filePaths: str | list[str]) -> dict[str, Any]:
    paths = [filePaths] if isinstance(filePaths, str) else list(filePaths)
    for path in paths:
        try:
            values = [
                float(ln.split()[-1])
                for ln in _lines(ws, path)
                if not ln.startswith(("track", "fixedStep", "variableStep", "#"))
            ]
        except ValueError:
            raise ToolError(f"{path}: not a WIG file (a data line is not a number)") from None
        ws.wig_tracks[path] = {"points": len(values), "max": max(values, default=0.0)}
        ws.note_loaded("wig", path, points=len(values))
    ws.tracks["wigTracks"] = True
    return {"loaded": paths, "tracks": len(ws.wig_tracks)}


@tool(
    CAT,
    "Load an operon table (TSV: operon, genes, strand, start, end).",
    params={"filePath": FILE},
    required=("filePath",),
    keywords=("operons", "transcription units"),
)
def load_operon_file(ws: Workspace, filePath: str) -> dict[str, Any]:
    rows = _lines(ws, filePath)
    header = rows[0].split("\t")
    ws.operons_table = [dict(zip(header, r.split("\t"), strict=False)) for r in rows[1:]]
    ws.note_loaded("operons", filePath, count=len(ws.operons_table))
    return {"loaded": filePath, "operons": len(ws.operons_table)}


@tool(CAT, "Files loaded in this session, by type.", read_only=True, keywords=("loaded files", "opened"))
def get_loaded_files_list(ws: Workspace) -> dict[str, Any]:
    return {"files": list(ws.loaded_files), "count": len(ws.loaded_files)}
