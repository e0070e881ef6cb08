"""Score stored FC results with BFCL's own checker, in-process (runs inside the BFCL venv).

Single-turn (AST, relevance) and multi-turn categories are supported.

Usage: python bfcl_reference.py MODEL INPUT.jsonl OUTPUT.jsonl [MODELS.json]
INPUT lines: {"key", "id", "category", "result"}; OUTPUT lines: {"key", "valid", "error_type"}.
MODELS.json, when given: BFCL's model registry as ``{name: [is_fc_model, underscore_to_dot]}``, read
from its own config objects (importing bfcl-eval costs ~6 s of CPU, so one process serves both).
A crash inside BFCL's checker is recorded as error_type "crash:<ExceptionName>".
Prints the in-process checking CPU time (seconds, excluding imports and data loading) on stdout.
"""

import json
import os
import sys
import tempfile
import time

os.environ.setdefault("BFCL_PROJECT_ROOT", tempfile.mkdtemp(prefix="bfcl-root-"))
os.environ.setdefault("OPENAI_API_KEY", "unused")  # the handler's SDK client wants one; no call is made

from bfcl_eval.constants.enums import Language, ReturnFormat
from bfcl_eval.eval_checker import eval_runner
from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry


def _language(category):
    if "javascript" in category:
        return Language.JAVASCRIPT, ReturnFormat.JAVASCRIPT
    if "java" in category:
        return Language.JAVA, ReturnFormat.JAVA
    return Language.PYTHON, ReturnFormat.PYTHON


def write_models(path):
    from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING

    mapping = {name: [c.is_fc_model, c.underscore_to_dot] for name, c in MODEL_CONFIG_MAPPING.items()}
    with open(path, "w") as handle:
        json.dump(mapping, handle)


def main(model, source, target, models=None):
    if models:
        write_models(models)
    handler = eval_runner.get_handler(model)
    with open(source) as handle:
        rows = [json.loads(line) for line in handle]
    prompts, answers = {}, {}
    for category in sorted({row["category"] for row in rows}):
        for entry in load_dataset_entry(category, include_prereq=False, include_language_specific_hint=False):
            prompts[entry["id"]] = entry
        if "relevance" not in category:
            for entry in load_ground_truth_entry(category):
                answers[entry["id"]] = entry["ground_truth"]
    started = time.process_time()  # CPU time: robust on a shared machine
    out = []
    for row in rows:
        category = row["category"]
        try:
            if category.startswith("multi_turn"):
                # BFCL caches backend instances in module globals by model name and entry id, so
                # each output gets its own name to start from a fresh state.
                verdict = eval_runner._evaluate_single_multi_turn_entry(
                    handler,
                    row["id"],
                    row["result"],
                    answers[row["id"]],
                    dict(prompts[row["id"]]),
                    model + "_" + row["key"].split("#")[-1],
                    category,
                )
                if not verdict["valid"]:
                    verdict = {"valid": False, "error_type": verdict["error"]["error_type"]}
            elif "relevance" in category:
                verdict = eval_runner._evaluate_single_relevance_entry(
                    handler, row["id"], row["result"], prompts[row["id"]], model, category
                )
            else:
                language, fmt = _language(category)
                verdict = eval_runner._evaluate_single_ast_entry(
                    handler,
                    row["id"],
                    row["result"],
                    answers[row["id"]],
                    prompts[row["id"]],
                    model,
                    category,
                    language=language,
                    return_format=fmt,
                )
            out.append(
                {"key": row["key"], "valid": verdict["valid"], "error_type": verdict.get("error_type", "")}
            )
        except Exception as exc:  # noqa: BLE001 - BFCL's checker crashed on this input
            out.append({"key": row["key"], "valid": False, "error_type": "crash:" + type(exc).__name__})
    elapsed = time.process_time() - started
    with open(target, "w") as handle:
        handle.writelines(json.dumps(item) + "\n" for item in out)
    print(f"{elapsed:.6f}")


if __name__ == "__main__":
    main(*sys.argv[1:5])
