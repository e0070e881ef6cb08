"""Sequence editing through an action queue: queue edits, review them, execute them, undo."""

from __future__ import annotations

from typing import Any

from callbench.benchmarks.genomics.tools._spec import CHROM, END, SEQ, START, boolean, integer, string, tool
from callbench.benchmarks.genomics.tools.sequence import clean_dna
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import ToolError

CAT = "sequence_editing"
QUEUED = {"actionId": string("Id of the queued action"), "queueLength": integer("Actions waiting")}
EDITORS = (
    "replace_sequence",
    "delete_sequence",
    "insert_sequence",
    "copy_sequence",
    "cut_sequence",
    "paste_sequence",
)
QUEUE_NOTE = " The edit is queued; run execute_actions to apply queued edits."


RANGE_EDITS = ("replace", "delete", "cut")  # act on bases start..end
POINT_EDITS = ("insert", "paste")  # act on the gap before ``start`` (stored with end = start - 1)


def _describe(action: dict[str, Any]) -> str:
    where = f"{action['chromosome']}:{action['start']}"
    if action["type"] in POINT_EDITS:
        return f"{action['type']} before {where}"
    return f"{action['type']} {where}-{action['end']}"


def _overlaps(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two queued edits touch the same bases, so applying both has no single meaning.

    Two ranges overlap when they share a base; an insertion overlaps a range when its gap lies strictly
    inside it (inserting right before the first or right after the last base is well defined). Two
    insertions never overlap: at one position they are applied in queue order."""
    if a["chromosome"] != b["chromosome"]:
        return False
    if a["type"] in POINT_EDITS and b["type"] in POINT_EDITS:
        return False
    if a["type"] in POINT_EDITS:
        a, b = b, a
    if b["type"] in POINT_EDITS:
        return a["start"] < b["start"] <= a["end"]
    return a["start"] <= b["end"] and b["start"] <= a["end"]


def _refuse_overlap(ws: Workspace, new: dict[str, Any]) -> None:
    """Refuse an edit that overlaps one already queued (a copy is no edit and never conflicts).

    Every queued edit uses the coordinates of the sequence as it is before execute_actions; an edit
    overlapping another would have to be placed in a sequence the other one already changed, which is
    ambiguous, so it is refused with the conflict named instead of silently mangling the sequence."""
    if new["type"] == "copy":
        return
    for queued in ws.actions:
        if queued["type"] != "copy" and _overlaps(queued, new):
            raise ToolError(
                f"{_describe(new)} overlaps queued {queued['id']} ({_describe(queued)}): queued edits "
                "all use the coordinates from before execute_actions, so overlapping edits are "
                "ambiguous; run execute_actions first, or clear_actions and queue one combined edit"
            )


def _queue(ws: Workspace, kind: str, chrom: str, start: int, end: int, sequence: str = "") -> dict[str, Any]:
    _refuse_overlap(ws, {"type": kind, "chromosome": chrom, "start": start, "end": end})
    action = {
        "id": ws.next_id("action"),
        "type": kind,
        "chromosome": chrom,
        "start": start,
        "end": end,
        "sequence": sequence,
        "status": "pending",
    }
    ws.actions.append(action)
    return {"actionId": action["id"], "type": kind, "queueLength": len(ws.actions)}


def _to_clipboard(ws: Workspace, kind: str, chromosome: str | None, start: int, end: int) -> dict[str, Any]:
    """Copy a region to the clipboard and record the copy/cut in the queue."""
    chrom, s, e = ws.region(chromosome, start, end)
    _refuse_overlap(
        ws, {"type": kind, "chromosome": chrom, "start": s, "end": e}
    )  # before the clipboard changes
    ws.clipboard = {"chromosome": chrom, "start": s, "end": e, "sequence": ws.subseq(chrom, s, e)}
    return _queue(ws, kind, chrom, s, e)


@tool(
    CAT,
    "Replace the bases of a region with a new sequence." + QUEUE_NOTE,
    params={"chromosome": CHROM, "start": START, "end": END, "sequence": SEQ},
    required=("start", "end", "sequence"),
    keywords=("substitute", "mutate", "change bases"),
    result=QUEUED,
)
def replace_sequence(
    ws: Workspace, start: int, end: int, sequence: str, chromosome: str | None = None
) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    return _queue(ws, "replace", chrom, s, e, clean_dna(sequence))


@tool(
    CAT,
    "Delete the bases of a region." + QUEUE_NOTE,
    params={"chromosome": CHROM, "start": START, "end": END},
    required=("start", "end"),
    keywords=("remove bases", "deletion"),
    result=QUEUED,
)
def delete_sequence(ws: Workspace, start: int, end: int, chromosome: str | None = None) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    return _queue(ws, "delete", chrom, s, e)


@tool(
    CAT,
    "Insert a sequence before a position." + QUEUE_NOTE,
    params={
        "chromosome": CHROM,
        "position": integer("Insert before this 1-based position", minimum=1),
        "sequence": SEQ,
    },
    required=("position", "sequence"),
    keywords=("add bases", "insertion"),
    result=QUEUED,
)
def insert_sequence(
    ws: Workspace, position: int, sequence: str, chromosome: str | None = None
) -> dict[str, Any]:
    chrom, s, _ = ws.region(chromosome, position, position)
    return _queue(ws, "insert", chrom, s, s - 1, clean_dna(sequence))


@tool(
    CAT,
    "Copy a region to the clipboard (recorded in the action queue).",
    params={"chromosome": CHROM, "start": START, "end": END},
    required=("start", "end"),
    keywords=("clipboard", "copy"),
    result=QUEUED,
)
def copy_sequence(ws: Workspace, start: int, end: int, chromosome: str | None = None) -> dict[str, Any]:
    return _to_clipboard(ws, "copy", chromosome, start, end)


@tool(
    CAT,
    "Cut a region: copy it to the clipboard and queue its deletion." + QUEUE_NOTE,
    params={"chromosome": CHROM, "start": START, "end": END},
    required=("start", "end"),
    keywords=("clipboard", "cut"),
    result=QUEUED,
)
def cut_sequence(ws: Workspace, start: int, end: int, chromosome: str | None = None) -> dict[str, Any]:
    return _to_clipboard(ws, "cut", chromosome, start, end)


@tool(
    CAT,
    "Paste the clipboard before a position." + QUEUE_NOTE,
    params={"chromosome": CHROM, "position": integer("Paste before this 1-based position", minimum=1)},
    required=("position",),
    keywords=("clipboard", "paste"),
    result=QUEUED,
)
def paste_sequence(ws: Workspace, position: int, chromosome: str | None = None) -> dict[str, Any]:
    if not ws.clipboard:
        raise ToolError("the clipboard is empty; copy or cut a region first")
    chrom, s, _ = ws.region(chromosome, position, position)
    return _queue(ws, "paste", chrom, s, s - 1, ws.clipboard["sequence"])


@tool(
    CAT,
    "Apply every queued edit. Queued coordinates all refer to the sequence before this call (edits run "
    "from the highest position down; overlapping edits are refused when queued; insertions at one position "
    "keep their queue order). With auto_save the edited genome is also written as GenBank to `filename`.",
    params={
        "auto_save": boolean("Write the edited genome to a file", default=False),
        "filename": string("GenBank file to write when auto_save is true"),
    },
    follow_up_of=EDITORS,
    keywords=("apply edits", "commit changes", "run queue"),
    result={"executed": integer("Actions applied")},
)
def execute_actions(ws: Workspace, auto_save: bool = False, filename: str | None = None) -> dict[str, Any]:
    edits = [(i, a) for i, a in enumerate(ws.actions) if a["type"] != "copy"]
    # Highest position first. At one position a range edit goes before an insertion (which then lands in
    # front of the edited range) and later insertions before earlier ones (so queue order is kept).
    order = sorted(
        edits,
        key=lambda ia: (ia[1]["chromosome"], ia[1]["start"], ia[1]["type"] in RANGE_EDITS, ia[0]),
        reverse=True,
    )
    for _, action in order:
        seq = ws.sequences[action["chromosome"]]
        ws.undo_stack.append({"chromosome": action["chromosome"], "sequence": seq})
        new = "" if action["type"] in ("delete", "cut") else action["sequence"]
        ws.sequences[action["chromosome"]] = seq[: action["start"] - 1] + new + seq[action["end"] :]
    done = [{**a, "status": "done"} for a in ws.actions]
    ws.executed_actions += done
    ws.actions.clear()
    out: dict[str, Any] = {
        "executed": len(done),
        "actions": [a["id"] for a in done],
        "lengths": {c: len(s) for c, s in ws.sequences.items()},
    }
    if auto_save:
        from callbench.benchmarks.genomics.tools.export import export_genbank_format

        out["savedTo"] = export_genbank_format(ws, filename or "edited_genome.gbk")["filePath"]
    return out


@tool(CAT, "Pending actions in the edit queue.", read_only=True, keywords=("queue", "pending edits"))
def get_action_list(ws: Workspace) -> dict[str, Any]:
    return {"actions": list(ws.actions), "count": len(ws.actions)}


@tool(
    CAT,
    "Show the action-queue panel (a view, no state change) and return its content.",
    read_only=True,
    keywords=("action panel", "show queue"),
)
def show_action_list(ws: Workspace) -> dict[str, Any]:
    # The panel's content is the queue itself, so this answers "what is waiting?" as get_action_list does.
    return {"shown": True, "actions": list(ws.actions), "count": len(ws.actions)}


@tool(
    CAT,
    "Discard every pending action. Asks for confirmation unless forced=true.",
    params={"forced": boolean("Skip the confirmation", default=False)},
    keywords=("empty queue", "discard edits"),
)
def clear_actions(ws: Workspace, forced: bool = False) -> dict[str, Any]:
    n = len(ws.actions)
    if n and not forced:
        return {"cleared": 0, "needsConfirmation": True, "pending": n}
    ws.actions.clear()
    return {"cleared": n}


@tool(CAT, "Current clipboard content.", read_only=True, keywords=("clipboard", "copied"))
def get_clipboard_content(ws: Workspace) -> dict[str, Any]:
    return {"clipboard": dict(ws.clipboard) if ws.clipboard else None}


@tool(CAT, "Undo the most recently executed edit.", keywords=("revert", "undo"))
def undo_last_action(ws: Workspace) -> dict[str, Any]:
    if not ws.undo_stack:
        raise ToolError("nothing to undo")
    last = ws.undo_stack.pop()
    ws.sequences[last["chromosome"]] = last["sequence"]
    return {"undone": True, "chromosome": last["chromosome"], "length": len(last["sequence"])}
