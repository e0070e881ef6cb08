"""Sequence editing through an action queue: queue edits, review them, execute them, undo."""

from __future__ import annotations

from typing import Any

from callbench.domains.genomics.tools._spec import CHROM, END, SEQ, START, boolean, integer, string, tool
from callbench.domains.genomics.tools.sequence import clean_dna
from callbench.domains.genomics.workspace import Workspace
from callbench.errors import ToolError

CAT = "sequence_editing"
QUEUED = {"actionId": string("Id of the queued action"), "queueLength": integer("Actions waiting")}
EDITORS = ("replace_sequence", "delete_sequence", "insert_sequence", "copy_sequence", "cut_sequence",
           "paste_sequence")
QUEUE_NOTE = " The edit is queued; run execute_actions to apply queued edits."


def _queue(ws: Workspace, kind: str, chrom: str, start: int, end: int, sequence: str = "") -> dict[str, Any]:
    action = {"id": ws.next_id("action"), "type": kind, "chromosome": chrom, "start": start, "end": end,
              "sequence": sequence, "status": "pending"}
    ws.actions.append(action)
    return {"actionId": action["id"], "type": kind, "queueLength": len(ws.actions)}


def _to_clipboard(ws: Workspace, kind: str, chromosome: str | None, start: int, end: int) -> dict[str, Any]:
    """Copy a region to the clipboard and record the copy/cut in the queue."""
    chrom, s, e = ws.region(chromosome, start, end)
    ws.clipboard = {"chromosome": chrom, "start": s, "end": e, "sequence": ws.subseq(chrom, s, e)}
    return _queue(ws, kind, chrom, s, e)


@tool(CAT, "Replace the bases of a region with a new sequence." + QUEUE_NOTE,
      params={"chromosome": CHROM, "start": START, "end": END, "sequence": SEQ},
      required=("start", "end", "sequence"), keywords=("substitute", "mutate", "change bases"), result=QUEUED)
def replace_sequence(ws: Workspace, start: int, end: int, sequence: str, chromosome: str | None = None) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    return _queue(ws, "replace", chrom, s, e, clean_dna(sequence))


@tool(CAT, "Delete the bases of a region." + QUEUE_NOTE, params={"chromosome": CHROM, "start": START, "end": END},
      required=("start", "end"), keywords=("remove bases", "deletion"), result=QUEUED)
def delete_sequence(ws: Workspace, start: int, end: int, chromosome: str | None = None) -> dict[str, Any]:
    chrom, s, e = ws.region(chromosome, start, end)
    return _queue(ws, "delete", chrom, s, e)


@tool(CAT, "Insert a sequence before a position." + QUEUE_NOTE,
      params={"chromosome": CHROM, "position": integer("Insert before this 1-based position", minimum=1),
              "sequence": SEQ},
      required=("position", "sequence"), keywords=("add bases", "insertion"), result=QUEUED)
def insert_sequence(ws: Workspace, position: int, sequence: str, chromosome: str | None = None) -> dict[str, Any]:
    chrom, s, _ = ws.region(chromosome, position, position)
    return _queue(ws, "insert", chrom, s, s - 1, clean_dna(sequence))


@tool(CAT, "Copy a region to the clipboard (recorded in the action queue).",
      params={"chromosome": CHROM, "start": START, "end": END}, required=("start", "end"),
      keywords=("clipboard", "copy"), result=QUEUED)
def copy_sequence(ws: Workspace, start: int, end: int, chromosome: str | None = None) -> dict[str, Any]:
    return _to_clipboard(ws, "copy", chromosome, start, end)


@tool(CAT, "Cut a region: copy it to the clipboard and queue its deletion." + QUEUE_NOTE,
      params={"chromosome": CHROM, "start": START, "end": END}, required=("start", "end"),
      keywords=("clipboard", "cut"), result=QUEUED)
def cut_sequence(ws: Workspace, start: int, end: int, chromosome: str | None = None) -> dict[str, Any]:
    return _to_clipboard(ws, "cut", chromosome, start, end)


@tool(CAT, "Paste the clipboard before a position." + QUEUE_NOTE,
      params={"chromosome": CHROM, "position": integer("Paste before this 1-based position", minimum=1)},
      required=("position",), keywords=("clipboard", "paste"), result=QUEUED)
def paste_sequence(ws: Workspace, position: int, chromosome: str | None = None) -> dict[str, Any]:
    if not ws.clipboard:
        raise ToolError("the clipboard is empty; copy or cut a region first")
    chrom, s, _ = ws.region(chromosome, position, position)
    return _queue(ws, "paste", chrom, s, s - 1, ws.clipboard["sequence"])


@tool(CAT, "Apply every queued edit (highest position first, so coordinates stay valid). With auto_save the "
      "edited genome is also written as GenBank to `filename`.",
      params={"auto_save": boolean("Write the edited genome to a file", default=False),
              "filename": string("GenBank file to write when auto_save is true")},
      follow_up_of=EDITORS, keywords=("apply edits", "commit changes", "run queue"),
      result={"executed": integer("Actions applied")})
def execute_actions(ws: Workspace, auto_save: bool = False, filename: str | None = None) -> dict[str, Any]:
    edits = [a for a in ws.actions if a["type"] != "copy"]
    for action in sorted(edits, key=lambda a: (a["chromosome"], a["start"]), reverse=True):
        seq = ws.sequences[action["chromosome"]]
        ws.undo_stack.append({"chromosome": action["chromosome"], "sequence": seq})
        new = "" if action["type"] in ("delete", "cut") else action["sequence"]
        ws.sequences[action["chromosome"]] = seq[:action["start"] - 1] + new + seq[action["end"]:]
    done = [{**a, "status": "done"} for a in ws.actions]
    ws.executed_actions += done
    ws.actions.clear()
    out: dict[str, Any] = {"executed": len(done), "actions": [a["id"] for a in done],
                           "lengths": {c: len(s) for c, s in ws.sequences.items()}}
    if auto_save:
        from callbench.domains.genomics.tools.export import export_genbank_format

        out["savedTo"] = export_genbank_format(ws, filename or "edited_genome.gbk")["filePath"]
    return out


@tool(CAT, "Pending actions in the edit queue.", read_only=True, keywords=("queue", "pending edits"))
def get_action_list(ws: Workspace) -> dict[str, Any]:
    return {"actions": list(ws.actions), "count": len(ws.actions)}


@tool(CAT, "Show the action-queue panel (a view, no state change) and return its content.", read_only=True,
      keywords=("action panel", "show queue"))
def show_action_list(ws: Workspace) -> dict[str, Any]:
    # The panel's content is the queue itself, so this answers "what is waiting?" as get_action_list does.
    return {"shown": True, "actions": list(ws.actions), "count": len(ws.actions)}


@tool(CAT, "Discard every pending action. Asks for confirmation unless forced=true.",
      params={"forced": boolean("Skip the confirmation", default=False)}, keywords=("empty queue", "discard edits"))
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
