"""Exports that really write FASTA / GenBank / GFF3 / BED / TSV files into the case's folder."""

from __future__ import annotations

import json
from typing import Any

from Bio.Seq import Seq

from callbench.benchmarks.genomics.tools._spec import (
    CHROM,
    END,
    FILE,
    START,
    boolean,
    enum,
    integer,
    obj,
    string,
    tool,
)
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

CAT = "export"
WRITTEN = {"filePath": string("Path of the written file")}


def _wrap(seq: str, width: int) -> str:
    return "\n".join(seq[i : i + width] for i in range(0, len(seq), width))


def _fasta(records: list[tuple[str, str]], width: int) -> str:
    return "".join(f">{h}\n{_wrap(s, width)}\n" for h, s in records)


def _cds_records(ws: Workspace) -> list[tuple[dict[str, Any], str]]:
    out = []
    for f in ws.features():
        if f["type"] == "CDS":
            dna = ws.subseq(f["chromosome"], f["start"], f["end"])
            out.append((f, dna if f["strand"] == "+" else str(Seq(dna).reverse_complement())))
    return out


@tool(
    CAT,
    "Export chromosome sequences (all, or one) as FASTA.",
    params={
        "filename": FILE,
        "chromosome": CHROM,
        "lineLength": integer("Bases per line", default=60, minimum=10),
    },
    required=("filename",),
    keywords=("save fasta", "write sequence"),
    result=WRITTEN,
)
def export_fasta_sequence(
    ws: Workspace, filename: str, chromosome: str | None = None, lineLength: int = 60
) -> dict[str, Any]:
    chroms = [ws.chromosome(chromosome)] if chromosome else list(ws.sequences)
    path = ws.write_file(filename, _fasta([(c, ws.sequences[c]) for c in chroms], lineLength))
    return {"filePath": path, "records": len(chroms)}


# Keys of a feature dict that are its location or workspace bookkeeping, not GenBank qualifiers.
NOT_QUALIFIERS = {"id", "type", "name", "chromosome", "start", "end", "strand", "source", "description"}
# Qualifiers a reload derives a feature's name from (genome.Feature.name), in that order.
NAME_QUALIFIERS = ("gene", "operon", "Name", "locus_tag", "label")


def genbank_qualifiers(feature: dict[str, Any]) -> dict[str, list[str]]:
    """GenBank qualifiers of a feature dict: every loaded qualifier (gene, locus_tag, product, note,
    translation, ...), a user annotation's description as a note, and a /label carrying the name when
    no name qualifier already does, so names survive an export and reload."""
    quals: dict[str, list[str]] = {}
    if feature.get("description"):
        quals["note"] = [str(feature["description"])]
    for key, value in feature.items():
        if key in NOT_QUALIFIERS or value is None or value == "" or isinstance(value, (dict, list)):
            continue
        quals.setdefault(key, []).append(str(value))
    named_by = next((quals[k][0] for k in NAME_QUALIFIERS if k in quals), None)
    if named_by != feature["name"] and feature["name"] != feature.get("id"):
        quals["label"] = [str(feature["name"])]
    return quals


@tool(
    CAT,
    "Export the genome with its features (including user annotations and executed edits) as GenBank, "
    "keeping their qualifiers (gene, locus_tag, product, note, translation, ...; names as /label).",
    params={"filename": FILE},
    required=("filename",),
    keywords=("save genbank", "gbk"),
    # Tolerated after execute_actions only when it re-exports the file that auto_save wrote.
    follow_up_of=({"tool": "execute_actions", "same_values": {"filename": "result.savedTo"}},),
    result=WRITTEN,
)
def export_genbank_format(ws: Workspace, filename: str) -> dict[str, Any]:
    from io import StringIO

    from Bio import SeqIO
    from Bio.SeqFeature import FeatureLocation, SeqFeature
    from Bio.SeqRecord import SeqRecord

    records = []
    for chrom, seq in ws.sequences.items():
        feats = [
            SeqFeature(
                FeatureLocation(f["start"] - 1, min(f["end"], len(seq)), 1 if f["strand"] == "+" else -1),
                type=f["type"],
                qualifiers=genbank_qualifiers(f),
            )
            for f in ws.features()
            if f["chromosome"] == chrom and f["start"] <= len(seq)
        ]
        rec = SeqRecord(
            Seq(seq), id=chrom, name=chrom, description=f"{chrom} exported by callbench", features=feats
        )
        rec.annotations["molecule_type"] = "DNA"
        records.append(rec)
    buf = StringIO()
    SeqIO.write(records, buf, "genbank")
    return {"filePath": ws.write_file(filename, buf.getvalue()), "records": len(records)}


@tool(
    CAT,
    "Export every coding sequence (DNA) as FASTA.",
    params={"filename": FILE},
    required=("filename",),
    keywords=("CDS fasta", "genes fasta"),
    result=WRITTEN,
)
def export_cds_fasta(ws: Workspace, filename: str) -> dict[str, Any]:
    recs = [
        (f"{f['name']} {f['chromosome']}:{f['start']}-{f['end']}({f['strand']})", dna)
        for f, dna in _cds_records(ws)
    ]
    return {"filePath": ws.write_file(filename, _fasta(recs, 60)), "records": len(recs)}


@tool(
    CAT,
    "Export every protein (translated CDS) as FASTA.",
    params={"filename": FILE},
    required=("filename",),
    keywords=("protein fasta", "proteome", "faa"),
    result=WRITTEN,
)
def export_protein_fasta(ws: Workspace, filename: str) -> dict[str, Any]:
    recs = [
        (f"{f['name']} {f.get('product', '')}".strip(), str(Seq(dna).translate(table=11, to_stop=True)))
        for f, dna in _cds_records(ws)
    ]
    return {"filePath": ws.write_file(filename, _fasta(recs, 60)), "records": len(recs)}


@tool(
    CAT,
    "Export annotations as GFF3.",
    params={
        "filename": FILE,
        "featureTypes": {
            "type": "array",
            "items": string("Feature type"),
            "description": "Only these types (default: all)",
        },
    },
    required=("filename",),
    keywords=("gff3", "annotation file"),
    result=WRITTEN,
)
def export_gff_annotations(
    ws: Workspace, filename: str, featureTypes: list[str] | None = None
) -> dict[str, Any]:
    lines = ["##gff-version 3"]
    for f in ws.features():
        if featureTypes is None or f["type"] in featureTypes:
            lines.append(
                f"{f['chromosome']}\tcallbench\t{f['type']}\t{f['start']}\t{f['end']}\t.\t{f['strand']}\t.\t"
                f"ID={f['id']};Name={f['name']}"
            )
    return {"filePath": ws.write_file(filename, "\n".join(lines) + "\n"), "features": len(lines) - 1}


@tool(
    CAT,
    "Export features (genes by default) as BED, optionally only those in a range.",
    params={
        "filename": FILE,
        "trackName": string("BED track name", default="features"),
        "featureType": string("Feature type to export", default="gene"),
        "includeScore": boolean("Fill the score column", default=False),
        "chromosome": CHROM,
        "startPosition": START,
        "endPosition": END,
    },
    required=("filename",),
    keywords=("bed file", "intervals"),
    result=WRITTEN,
)
def export_bed_format(
    ws: Workspace,
    filename: str,
    trackName: str = "features",
    featureType: str = "gene",
    includeScore: bool = False,
    chromosome: str | None = None,
    startPosition: int | None = None,
    endPosition: int | None = None,
) -> dict[str, Any]:
    rows = [f'track name="{trackName}"']
    for f in ws.features():
        if f["type"] != featureType or (chromosome and f["chromosome"] != chromosome):
            continue
        if (startPosition and f["end"] < startPosition) or (endPosition and f["start"] > endPosition):
            continue
        score = min(1000, f["end"] - f["start"] + 1) if includeScore else 0
        rows.append(f"{f['chromosome']}\t{f['start'] - 1}\t{f['end']}\t{f['name']}\t{score}\t{f['strand']}")
    return {"filePath": ws.write_file(filename, "\n".join(rows) + "\n"), "features": len(rows) - 1}


@tool(
    CAT,
    "Export the sequence of the current view as FASTA.",
    params={"filename": FILE, "lineLength": integer("Bases per line", default=60, minimum=10)},
    required=("filename",),
    keywords=("visible region", "current view", "fasta"),
    result=WRITTEN,
)
def export_current_view_fasta(ws: Workspace, filename: str, lineLength: int = 60) -> dict[str, Any]:
    v = ws.view
    header = f"{v['chromosome']}:{v['start']}-{v['end']}"
    path = ws.write_file(
        filename, _fasta([(header, ws.subseq(v["chromosome"], v["start"], v["end"]))], lineLength)
    )
    return {"filePath": path, "region": header, "length": v["end"] - v["start"] + 1}


@tool(
    CAT,
    "Export a session dataset (annotations, variants, primers, highlights or bookmarks) as JSON or TSV.",
    params={
        "filename": FILE,
        "dataType": enum("What to export", ["annotations", "variants", "primers", "highlights", "bookmarks"]),
        "format": enum("File format", ["json", "tsv"], default="json"),
    },
    required=("filename", "dataType"),
    keywords=("save data", "table", "json"),
    result=WRITTEN,
)
def export_data(ws: Workspace, filename: str, dataType: str, format: str = "json") -> dict[str, Any]:
    data = {
        "annotations": list(ws.annotations.values()),
        "variants": ws.variants,
        "primers": list(ws.primers.values()),
        "highlights": ws.highlights,
        "bookmarks": ws.bookmarks,
    }[dataType]
    if format == "json":
        text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    else:
        keys = sorted({k for row in data for k in row})
        text = (
            "\n".join(["\t".join(keys)] + ["\t".join(str(r.get(k, "")) for k in keys) for r in data]) + "\n"
        )
    return {"filePath": ws.write_file(filename, text), "rows": len(data)}


@tool(
    CAT,
    "Change default export settings.",
    params={
        "settings": obj(
            "Settings to change",
            {
                "defaultFormat": enum("Default format", ["fasta", "genbank", "gff", "bed"]),
                "lineLength": integer("FASTA line length", minimum=10),
                "includeAnnotations": boolean("Include annotations"),
                "outputDirectory": string("Folder for exports"),
            },
            minProperties=1,
        )
    },
    required=("settings",),
    keywords=("export options", "preferences"),
)
def configure_export_settings(ws: Workspace, settings: dict[str, Any]) -> dict[str, Any]:
    ws.export_settings.update(settings)
    return {"settings": dict(ws.export_settings)}


@tool(
    CAT,
    "Save a screenshot of the browser as an image file (an SVG rendering of the current view).",
    params={
        "filePath": FILE,
        "target": enum("What to capture", ["full_window", "visible_tracks"], default="full_window"),
    },
    required=("filePath",),
    keywords=("screenshot", "image", "picture", "snapshot"),
    result=WRITTEN,
)
def capture_screenshot(ws: Workspace, filePath: str, target: str = "full_window") -> dict[str, Any]:
    v = ws.view
    tracks = [t for t, on in ws.tracks.items() if on]
    rows = "".join(f'<text x="10" y="{40 + 20 * i}">{t}</text>' for i, t in enumerate(tracks))
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="800" height="{60 + 20 * len(tracks)}">'
        f'<text x="10" y="20">{v["chromosome"]}:{v["start"]}-{v["end"]} ({target})</text>{rows}</svg>\n'
    )
    return {"filePath": ws.write_file(filePath, svg), "target": target}


@tool(
    CAT,
    "Open an image file in the viewer.",
    params={"filePath": FILE},
    required=("filePath",),
    keywords=("view image", "open picture"),
)
def open_image_file(ws: Workspace, filePath: str) -> dict[str, Any]:
    path = ws.existing_file(filePath)
    if path.suffix.lower() not in (".png", ".svg", ".jpg", ".jpeg", ".gif"):
        raise ToolError(f"{filePath}: not an image file")
    ws.ui["image_viewer"] = ws.relative(path)
    return {"opened": ws.relative(path), "bytes": path.stat().st_size}
