"""Annotations: gene details, operons, neighbourhoods, and user annotation CRUD with history."""

from __future__ import annotations

from typing import Any

from callbench.benchmarks.genomics.tools._spec import (
    CHROM,
    END,
    START,
    array,
    enum,
    integer,
    obj,
    string,
    tool,
)
from callbench.benchmarks.genomics.tools.navigation import find_feature
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

CAT = "annotation"
FEATURE_TYPES = [
    "gene",
    "CDS",
    "promoter",
    "operon",
    "repeat_region",
    "regulatory_region",
    "misc_feature",
    "terminator",
    "rRNA",
    "tRNA",
]
UPDATES = obj(
    "Fields to change",
    {
        "name": string("New name"),
        "description": string("New description"),
        "note": string("Note"),
        "type": enum("Feature type", FEATURE_TYPES),
        "start": START,
        "end": END,
        "strand": enum("Strand", ["+", "-"]),
    },
    minProperties=1,
)


def _record(ws: Workspace, action: str, ann_id: str, details: dict[str, Any]) -> None:
    ws.annotation_history.append(
        {"seq": len(ws.annotation_history) + 1, "action": action, "annotationId": ann_id, **details}
    )


def _find_annotation(ws: Workspace, identifier: str) -> dict[str, Any]:
    for ann in ws.annotations.values():
        if identifier in (ann["id"], ann["name"]):
            return ann
    raise ToolError(f"no user annotation {identifier!r}")


@tool(
    CAT,
    "Create a user annotation on a region.",
    params={
        "name": string("Annotation name"),
        "type": enum("Feature type", FEATURE_TYPES, default="misc_feature"),
        "chromosome": CHROM,
        "start": START,
        "end": END,
        "strand": enum("Strand", ["+", "-"], default="+"),
        "description": string("Description"),
    },
    required=("name", "start", "end"),
    keywords=("annotate", "add feature", "label region"),
    result={"id": string("New annotation id, user_<n>_<hex>")},
)
def create_annotation(
    ws: Workspace,
    name: str,
    start: int,
    end: int,
    type: str = "misc_feature",
    chromosome: str | None = None,
    strand: str = "+",
    description: str = "",
) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    ann: dict[str, Any] = {
        "id": ws.next_id("user", name),
        "type": type,
        "name": name,
        "chromosome": chrom,
        "start": s,
        "end": e,
        "strand": strand,
        "description": description,
        "source": "user",
    }
    ws.annotations[ann["id"]] = ann
    _record(ws, "create", ann["id"], {"name": name})
    return dict(ann)


@tool(
    CAT,
    "Change fields of a user annotation, found by id or name.",
    params={"identifier": string("Annotation id or name"), "updates": UPDATES},
    required=("identifier", "updates"),
    keywords=("edit annotation", "rename", "modify feature"),
)
def update_annotation(ws: Workspace, identifier: str, updates: dict[str, Any]) -> dict[str, Any]:
    ann = _find_annotation(ws, identifier)
    before = {k: ann.get(k) for k in updates}
    ann.update(updates)
    _record(ws, "update", ann["id"], {"before": before, "after": dict(updates)})
    return dict(ann)


@tool(
    CAT,
    "Delete a user annotation by id or name.",
    params={"identifier": string("Annotation id or name")},
    required=("identifier",),
    keywords=("remove annotation",),
)
def delete_annotation(ws: Workspace, identifier: str) -> dict[str, Any]:
    ann = _find_annotation(ws, identifier)
    del ws.annotations[ann["id"]]
    _record(ws, "delete", ann["id"], {"name": ann["name"]})
    return {"deleted": ann["id"]}


@tool(
    CAT,
    "Apply the same updates to several user annotations (by ids or names).",
    params={
        "identifiers": array("Annotation ids or names", string("id or name"), minItems=1),
        "updates": UPDATES,
    },
    required=("identifiers", "updates"),
    keywords=("batch edit", "several annotations"),
)
def bulk_update_annotations(ws: Workspace, identifiers: list[str], updates: dict[str, Any]) -> dict[str, Any]:
    done = [update_annotation(ws, ident, updates)["id"] for ident in identifiers]
    return {"updated": done, "count": len(done)}


@tool(
    CAT,
    "One annotation (user or genome feature) by id or name.",
    params={"identifier": string("Annotation id or feature name")},
    required=("identifier",),
    read_only=True,
    keywords=("show annotation",),
)
def get_annotation(ws: Workspace, identifier: str) -> dict[str, Any]:
    try:
        return dict(_find_annotation(ws, identifier))
    except ToolError:
        return dict(find_feature(ws, identifier, tuple(FEATURE_TYPES)))


@tool(
    CAT,
    "List annotations, optionally only user ones, one type, or one region.",
    params={
        "type": enum("Feature type", FEATURE_TYPES),
        "userOnly": {"type": "boolean", "default": False, "description": "Only user annotations"},
        "chromosome": CHROM,
        "start": START,
        "end": END,
        "limit": integer("Maximum returned", default=100, minimum=1),
    },
    read_only=True,
    keywords=("features", "annotations list"),
)
def list_annotations(
    ws: Workspace,
    type: str | None = None,
    userOnly: bool = False,
    chromosome: str | None = None,
    start: int | None = None,
    end: int | None = None,
    limit: int = 100,
) -> dict[str, Any]:
    pool = list(ws.annotations.values()) if userOnly else ws.features()
    items = [
        f
        for f in pool
        if (type is None or f["type"] == type)
        and (chromosome is None or f["chromosome"] == chromosome)
        and (start is None or f["end"] >= start)
        and (end is None or f["start"] <= end)
    ]
    return {"annotations": [_brief(f) for f in items[:limit]], "count": len(items)}


def _brief(f: dict[str, Any]) -> dict[str, Any]:
    return {
        k: f.get(k)
        for k in ("id", "type", "name", "chromosome", "start", "end", "strand", "product", "description")
        if f.get(k) not in (None, "")
    }


@tool(
    CAT,
    "Search annotation names, products and descriptions for a text.",
    params={"query": string("Text to look for"), "type": enum("Feature type", FEATURE_TYPES)},
    required=("query",),
    read_only=True,
    keywords=("find annotation", "lookup"),
)
def search_annotations(ws: Workspace, query: str, type: str | None = None) -> dict[str, Any]:
    q = query.lower()
    hits = [
        _brief(f)
        for f in ws.features()
        if (type is None or f["type"] == type)
        and any(q in str(f.get(k, "")).lower() for k in ("name", "product", "description", "note"))
    ]
    return {"results": hits[:100], "count": len(hits)}


@tool(
    CAT,
    "Change history of user annotations (newest first).",
    params={"limit": integer("Maximum records", default=20, minimum=1)},
    read_only=True,
    keywords=("audit", "changes", "history"),
)
def get_annotation_history(ws: Workspace, limit: int = 20) -> dict[str, Any]:
    return {"history": list(reversed(ws.annotation_history))[:limit], "total": len(ws.annotation_history)}


@tool(
    CAT,
    "Details of a gene: coordinates, strand, product, locus tag, protein length, operon.",
    params={"geneName": string("Gene name or locus tag")},
    required=("geneName",),
    read_only=True,
    keywords=("gene info", "product", "function"),
)
def get_gene_details(ws: Workspace, geneName: str) -> dict[str, Any]:
    cds = find_feature(ws, geneName, ("CDS", "gene"))
    operon = next(
        (
            f["name"]
            for f in ws.features()
            if f["type"] == "operon"
            and f["chromosome"] == cds["chromosome"]
            and f["start"] <= cds["start"]
            and cds["end"] <= f["end"]
        ),
        None,
    )
    return {
        "name": cds["name"],
        "chromosome": cds["chromosome"],
        "start": cds["start"],
        "end": cds["end"],
        "strand": cds["strand"],
        "length": cds["end"] - cds["start"] + 1,
        "product": cds.get("product", ""),
        "locus_tag": cds.get("locus_tag", ""),
        "proteinLength": len(cds.get("translation", "")),
        "operon": operon,
    }


@tool(
    CAT,
    "Operons of the genome (or those overlapping a region), with member genes.",
    params={"chromosome": CHROM, "start": START, "end": END},
    read_only=True,
    keywords=("transcription unit", "polycistronic"),
)
def get_operons(
    ws: Workspace, chromosome: str | None = None, start: int | None = None, end: int | None = None
) -> dict[str, Any]:
    ops = [
        f
        for f in ws.features()
        if f["type"] == "operon"
        and (chromosome is None or f["chromosome"] == chromosome)
        and (start is None or f["end"] >= start)
        and (end is None or f["start"] <= end)
    ]
    return {
        "operons": [{**_brief(f), "genes": str(f.get("note", ""))[7:].split(",")} for f in ops],
        "count": len(ops),
    }


@tool(
    CAT,
    "Features within a distance of a position or gene.",
    params={
        "geneName": string("Gene name"),
        "chromosome": CHROM,
        "position": integer("Position", minimum=1),
        "distance": integer("Search radius (bp)", default=5000, minimum=1),
    },
    any_of=(("geneName",), ("position",)),
    read_only=True,
    keywords=("neighbourhood", "nearby genes", "context"),
)
def get_nearby_features(
    ws: Workspace,
    geneName: str | None = None,
    chromosome: str | None = None,
    position: int | None = None,
    distance: int = 5000,
) -> dict[str, Any]:
    if geneName:
        anchor = find_feature(ws, geneName)
        chrom, lo, hi = anchor["chromosome"], anchor["start"] - distance, anchor["end"] + distance
    else:
        chrom = ws.chromosome(chromosome)
        lo, hi = (position or 1) - distance, (position or 1) + distance
    near = [
        _brief(f)
        for f in ws.features()
        if f["chromosome"] == chrom
        and f["type"] in ("gene", "promoter", "operon", "repeat_region", "regulatory_region", "misc_feature")
        and f["end"] >= lo
        and f["start"] <= hi
        and f.get("name") != geneName
    ]
    return {"features": near, "count": len(near)}


@tool(
    CAT,
    "Intergenic regions (gaps between genes) of at least a minimum length.",
    params={"chromosome": CHROM, "minLength": integer("Minimum gap length", default=100, minimum=1)},
    read_only=True,
    keywords=("non-coding", "between genes", "spacer"),
)
def find_intergenic_regions(
    ws: Workspace, chromosome: str | None = None, minLength: int = 100
) -> dict[str, Any]:
    chrom = ws.chromosome(chromosome)
    genes = sorted(
        (f["start"], f["end"]) for f in ws.features() if f["type"] == "gene" and f["chromosome"] == chrom
    )
    gaps, last = [], 0
    for s, e in genes:
        if s - last - 1 >= minLength:
            gaps.append({"start": last + 1, "end": s - 1, "length": s - last - 1})
        last = max(last, e)
    return {"chromosome": chrom, "regions": gaps[:200], "count": len(gaps)}


@tool(
    CAT,
    "Quality checks of CDS annotations: start codon, stop codon, frame, internal stops.",
    params={"geneName": string("Only this gene")},
    read_only=True,
    keywords=("validate annotation", "curation"),
)
def assess_annotation_quality(ws: Workspace, geneName: str | None = None) -> dict[str, Any]:
    from callbench.benchmarks.genomics.tools.sequence import get_coding_sequence

    cds_list = [
        f for f in ws.features() if f["type"] == "CDS" and (geneName is None or f["name"] == geneName)
    ]
    if geneName and not cds_list:
        raise ToolError(f"gene {geneName!r} not found")
    issues = []
    for cds in cds_list:
        dna = get_coding_sequence(ws, cds["name"])["codingSequence"]
        problems = [
            p
            for p, bad in (
                ("no ATG/GTG/TTG start", dna[:3] not in ("ATG", "GTG", "TTG")),
                ("no stop codon", dna[-3:] not in ("TAA", "TAG", "TGA")),
                ("length not a multiple of 3", len(dna) % 3 != 0),
            )
            if bad
        ]
        if problems:
            issues.append({"gene": cds["name"], "problems": problems})
    return {"checked": len(cds_list), "issues": issues, "passed": len(cds_list) - len(issues)}
