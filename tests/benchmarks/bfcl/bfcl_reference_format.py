"""BFCL's own format-sensitivity evaluation of stored answers, in-process (runs inside the BFCL venv).

Usage: python bfcl_reference_format.py MODEL INPUT.jsonl OUTPUT.json SCORE_DIR
INPUT lines: {"key", "id" (BFCL's format-sensitivity id), "result" (the answer text), "runner"}.
OUTPUT: {"verdicts": {key: {"valid", "error_type"}}, "configs": [...], "prompts": {id: system prompt},
"header": the header line of the score file BFCL's format_sensitivity_runner writes for the rows
marked "runner" (one answer per id)}.
MODEL must be a registered prompt-mode model whose handler decodes with BFCL's default prompting
decoder. A crash inside BFCL's checker is recorded as error_type "crash:<ExceptionName>".
"""

import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("BFCL_PROJECT_ROOT", tempfile.mkdtemp(prefix="bfcl-root-"))
os.environ.setdefault("OPENAI_API_KEY", "unused")  # the handler's SDK client wants one; no call is made

from bfcl_eval.constants.enums import Language, ReturnFormat
from bfcl_eval.eval_checker import eval_runner
from bfcl_eval.model_handler.utils import formulate_system_prompt, parse_prompt_variation_params
from bfcl_eval.utils import get_all_format_sensitivity_configs, load_dataset_entry, load_ground_truth_entry

CATEGORY = "format_sensitivity"


def main(model, source, target, score_dir):
    handler = eval_runner.get_handler(model)
    rows = [json.loads(line) for line in Path(source).read_text().splitlines() if line.strip()]
    prompts = load_dataset_entry(CATEGORY, include_prereq=False, include_language_specific_hint=False)
    answers = load_ground_truth_entry(CATEGORY)
    by_id = {entry["id"]: (entry, answer) for entry, answer in zip(prompts, answers, strict=True)}
    # the prompts a model gets: generation loads the entries with the language hint
    shown = {e["id"]: e for e in load_dataset_entry(CATEGORY, include_prereq=False)}
    verdicts = {}
    for row in rows:
        entry, answer = by_id[row["id"]]
        config = row["id"].split(":")[1]
        returned, tagged, *_ = parse_prompt_variation_params(config)
        try:
            verdict = eval_runner._evaluate_single_ast_entry(
                handler,
                row["id"],
                row["result"],
                answer["ground_truth"],
                dict(entry),
                model,
                CATEGORY,
                language=Language.PYTHON,
                return_format=ReturnFormat(returned),
                has_tool_call_tag=tagged,
            )
            verdicts[row["key"]] = {"valid": verdict["valid"], "error_type": verdict.get("error_type", "")}
        except Exception as exc:  # noqa: BLE001 - BFCL's checker crashed on this input
            verdicts[row["key"]] = {"valid": False, "error_type": "crash:" + type(exc).__name__}
    asked = sorted({row["id"] for row in rows})
    system = {
        entry_id: formulate_system_prompt(entry_id.split(":")[1], shown[entry_id]["function"])
        for entry_id in asked
    }
    # the runner itself on one answer per id: its per-config figures and spread
    firsts = [row for row in rows if row.get("runner")]
    firsts.sort(key=lambda row: int(row["id"].split(":")[0].rsplit("_", 1)[1]))
    results = [{"id": row["id"], "result": row["result"]} for row in firsts]
    eval_runner.format_sensitivity_runner(
        handler,
        results,
        [dict(by_id[row["id"]][0]) for row in firsts],
        [by_id[row["id"]][1] for row in firsts],
        model,
        CATEGORY,
        Path(score_dir),
    )
    score_file = next(Path(score_dir).rglob(f"*_{CATEGORY}_score.json"))
    header = json.loads(score_file.read_text().splitlines()[0])
    out = {
        "verdicts": verdicts,
        "configs": get_all_format_sensitivity_configs(),
        "prompts": system,
        "header": header,
    }
    Path(target).write_text(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:5])
