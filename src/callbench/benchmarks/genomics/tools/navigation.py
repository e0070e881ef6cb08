"""Navigation tools: move the view, zoom, pan, find and select genes, saved view states."""

from __future__ import annotations

import math
from typing import Any

from callbench.benchmarks.genomics.tools._spec import (
    CHROM,
    END,
    START,
    boolean,
    integer,
    number,
    string,
    tool,
)
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

VIEW = {"chromosome": string("Chromosome"), "start": integer("View start"), "end": integer("View end")}


def find_feature(ws: Workspace, name: str, kinds: tuple[str, ...] = ("gene", "CDS")) -> dict[str, Any]:
    """The first gene/CDS whose name, locus tag or id equals ``name`` (case-insensitive)."""
    wanted = name.strip().lower()
    for feat in ws.features():
        if feat["type"] in kinds and wanted in (
            str(feat.get("name", "")).lower(),
            str(feat.get("locus_tag", "")).lower(),
            str(feat["id"]).lower(),
        ):
            return feat
    raise ToolError(f"gene {name!r} not found")


@tool(
    "navigation",
    "Move the genome browser view to a position or region. Give `position` to centre a "
    "1 kb window on it, or `start` and `end` for an exact region.",
    params={
        "chromosome": CHROM,
        "position": integer("Position to centre on", minimum=1),
        "start": START,
        "end": END,
    },
    any_of=(("position",), ("start",)),
    alternative_keys={"position": [["start"]]},
    keywords=("go to", "jump", "goto", "coordinate", "region", "look at", "view", "browse"),
    result=VIEW,
)
def navigate_to_position(
    ws: Workspace,
    chromosome: str | None = None,
    position: int | None = None,
    start: int | None = None,
    end: int | None = None,
) -> dict[str, Any]:
    chrom = ws.chromosome(chromosome)
    if position is not None:
        return ws.set_view(chrom, position - 500, position + 499)
    if start is None:
        raise ToolError("give position, or start (and end)")
    return ws.set_view(chrom, start, end if end is not None else start + 999)


def _zoom(ws: Workspace, factor: float) -> dict[str, Any]:
    v = ws.view
    centre, width = (v["start"] + v["end"]) // 2, v["end"] - v["start"] + 1
    try:
        scaled = width * float(factor)
    except OverflowError:  # an integer factor of hundreds of digits: past any float
        raise ToolError("the zoom factor is too large") from None
    if not math.isfinite(scaled):  # a schema-valid factor can still overflow a float
        raise ToolError(f"zoom factor {factor:g} is too large")
    new_width = max(50, int(scaled))
    return ws.set_view(v["chromosome"], centre - new_width // 2, centre - new_width // 2 + new_width - 1)


@tool(
    "navigation",
    "Zoom in on the centre of the current view.",
    params={"factor": number("Zoom factor (2 halves the visible width)", default=2, minimum=1)},
    keywords=("magnify", "closer"),
    result=VIEW,
)
def zoom_in(ws: Workspace, factor: float = 2) -> dict[str, Any]:
    return _zoom(ws, 1 / factor)


@tool(
    "navigation",
    "Zoom out around the centre of the current view.",
    params={"factor": number("Zoom factor (2 doubles the visible width)", default=2, minimum=1)},
    keywords=("wider", "further"),
    result=VIEW,
)
def zoom_out(ws: Workspace, factor: float = 2) -> dict[str, Any]:
    return _zoom(ws, factor)


def _pan(ws: Workspace, direction: int, distance: int | None) -> dict[str, Any]:
    v = ws.view
    step = distance if distance is not None else (v["end"] - v["start"] + 1) // 2
    return ws.set_view(v["chromosome"], v["start"] + direction * step, v["end"] + direction * step)


@tool(
    "navigation",
    "Pan the view towards lower coordinates (half a window unless `distance` is given).",
    params={"distance": integer("Base pairs to move", minimum=1)},
    keywords=("scroll", "move left"),
    result=VIEW,
)
def pan_left(ws: Workspace, distance: int | None = None) -> dict[str, Any]:
    return _pan(ws, -1, distance)


@tool(
    "navigation",
    "Pan the view towards higher coordinates (half a window unless `distance` is given).",
    params={"distance": integer("Base pairs to move", minimum=1)},
    keywords=("scroll", "move right"),
    result=VIEW,
)
def pan_right(ws: Workspace, distance: int | None = None) -> dict[str, Any]:
    return _pan(ws, 1, distance)


@tool(
    "navigation",
    "Centre the view on a gene, keeping the current zoom level.",
    params={"geneName": string("Gene name or locus tag, e.g. lacZ")},
    required=("geneName",),
    equivalent_to=("zoom_to_gene",),
    keywords=("go to gene", "gene"),
    result=VIEW,
)
def jump_to_gene(ws: Workspace, geneName: str) -> dict[str, Any]:
    feat = find_feature(ws, geneName)
    width = ws.view["end"] - ws.view["start"] + 1
    centre = (feat["start"] + feat["end"]) // 2
    return ws.set_view(feat["chromosome"], centre - width // 2, centre - width // 2 + width - 1)


@tool(
    "navigation",
    "Fit the view to a gene's extent, with optional padding on both sides.",
    params={
        "geneName": string("Gene name or locus tag"),
        "padding": integer("Extra base pairs on each side", default=100, minimum=0),
    },
    required=("geneName",),
    keywords=("fit gene", "gene"),
    result=VIEW,
)
def zoom_to_gene(ws: Workspace, geneName: str, padding: int = 100) -> dict[str, Any]:
    feat = find_feature(ws, geneName)
    return ws.set_view(feat["chromosome"], feat["start"] - padding, feat["end"] + padding)


@tool(
    "navigation",
    "Report the browser state: loaded genome, current view, selection, visible tracks.",
    read_only=True,
    keywords=("status", "where", "view"),
)
def get_current_state(ws: Workspace) -> dict[str, Any]:
    return {
        "genome": ws.genome.name if ws.genome else None,
        "view": dict(ws.view),
        "selection": ws.selection,
        "visibleTracks": [t for t, on in ws.tracks.items() if on],
        "activeTab": ws.active_tab,
        "workingDirectory": ws.cwd,
    }


@tool(
    "navigation",
    "Select a gene (its full extent becomes the active selection).",
    params={"geneName": string("Gene name or locus tag")},
    required=("geneName",),
    keywords=("pick", "choose gene"),
)
def select_gene(ws: Workspace, geneName: str) -> dict[str, Any]:
    feat = find_feature(ws, geneName)
    ws.selection = {
        "type": "gene",
        "name": feat["name"],
        "chromosome": feat["chromosome"],
        "start": feat["start"],
        "end": feat["end"],
        "strand": feat["strand"],
    }
    return dict(ws.selection)


@tool(
    "navigation",
    "Select a sequence region (becomes the active selection for later operations).",
    params={"chromosome": CHROM, "start": START, "end": END},
    required=("start", "end"),
    keywords=("mark region", "select"),
)
def select_sequence_region(
    ws: Workspace, start: int, end: int, chromosome: str | None = None
) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    ws.selection = {"type": "region", "chromosome": chrom, "start": s, "end": e}
    return {**ws.selection, "length": e - s + 1}


@tool(
    "navigation",
    "Look up a gene by name and return its coordinates and product (does not move the view).",
    params={"name": string("Gene name or locus tag")},
    required=("name",),
    read_only=True,
    keywords=("locate gene", "where is gene", "coordinates"),
    result={"name": string("Gene"), "start": integer("Start"), "end": integer("End")},
)
def find_gene_by_name(ws: Workspace, name: str) -> dict[str, Any]:
    feat = find_feature(ws, name)
    cds = next((f for f in ws.features() if f["type"] == "CDS" and f.get("name") == feat["name"]), feat)
    return {
        "name": feat["name"],
        "chromosome": feat["chromosome"],
        "start": feat["start"],
        "end": feat["end"],
        "strand": feat["strand"],
        "product": cds.get("product", ""),
        "locus_tag": cds.get("locus_tag", ""),
    }


@tool(
    "navigation",
    "Save the current view under a name so it can be restored later.",
    params={"name": string("Name of the saved view")},
    required=("name",),
    keywords=("remember view",),
)
def save_view_state(ws: Workspace, name: str) -> dict[str, Any]:
    ws.saved_views[name] = dict(ws.view)
    return {"saved": name, "view": dict(ws.view)}


@tool(
    "navigation",
    "Restore a view saved with save_view_state.",
    params={"name": string("Name of the saved view")},
    required=("name",),
    keywords=("go back", "saved view"),
    result=VIEW,
)
def restore_view_state(ws: Workspace, name: str) -> dict[str, Any]:
    if name not in ws.saved_views:
        raise ToolError(f"no saved view {name!r}; saved: {', '.join(ws.saved_views) or 'none'}")
    v = ws.saved_views[name]
    return ws.set_view(v["chromosome"], v["start"], v["end"])


@tool(
    "navigation",
    "Summary of the loaded genome: organism, chromosomes and lengths, feature counts.",
    read_only=True,
    keywords=("genome size", "summary", "organism"),
)
def get_genome_info(ws: Workspace) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for feat in ws.features():
        counts[feat["type"]] = counts.get(feat["type"], 0) + 1
    return {
        "name": ws.genome.name if ws.genome else None,
        "organism": ws.genome.organism if ws.genome else "",
        "chromosomes": {c: len(s) for c, s in ws.sequences.items()},
        "totalLength": sum(len(s) for s in ws.sequences.values()),
        "featureCounts": counts,
    }


@tool(
    "navigation",
    "List the chromosomes (sequence records) of the loaded genome with their lengths.",
    read_only=True,
    keywords=("contigs", "plasmid", "sequences"),
)
def get_chromosome_list(ws: Workspace) -> dict[str, Any]:
    return {
        "chromosomes": [{"name": c, "length": len(s)} for c, s in ws.sequences.items()],
        "current": ws.view["chromosome"],
    }


@tool(
    "navigation",
    "Make another chromosome current (view starts at its first kilobase).",
    params={
        "chromosome": string("Chromosome / sequence id"),
        "keepPosition": boolean("Keep the current coordinates if they fit", default=False),
    },
    required=("chromosome",),
    keywords=("switch chromosome", "plasmid"),
    result=VIEW,
)
def switch_chromosome(ws: Workspace, chromosome: str, keepPosition: bool = False) -> dict[str, Any]:
    chrom = ws.chromosome(chromosome)
    if keepPosition and ws.view["end"] <= len(ws.sequences[chrom]):
        return ws.set_view(chrom, ws.view["start"], ws.view["end"])
    return ws.set_view(chrom, 1, 1000)
