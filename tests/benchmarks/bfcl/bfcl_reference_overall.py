"""BFCL's own leaderboard aggregation of per-category results (runs inside the BFCL venv).

Usage: python bfcl_reference_overall.py INPUT.json OUTPUT.json
INPUT: {model: {category: {"accuracy", "total_count"}}} (registered model names without "_").
OUTPUT: {model: {"overall", "non_live", "live", "irrelevance", "multi_turn", "agentic"}}: the values
bfcl-eval's generate_leaderboard_csv computes, taken before it formats them as percentages (its CSV
writer is replaced by one that keeps the rows; nothing is written).
"""

import copy
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("BFCL_PROJECT_ROOT", tempfile.mkdtemp(prefix="bfcl-root-"))
os.environ.setdefault("OPENAI_API_KEY", "unused")
os.environ.pop("WANDB_BFCL_PROJECT", None)

from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING
from bfcl_eval.eval_checker import eval_runner_helper


def _row(rows, shown, column_of_name=1):
    """The row of the model whose display name is ``shown``."""
    return next(r for r in rows if r[column_of_name] == shown)


def main(source, target):
    table = json.loads(Path(source).read_text())
    kept = {}

    def keep(data, file_path, **_):
        kept[Path(file_path).name] = copy.deepcopy(data)

    eval_runner_helper.write_score_csv_file = keep
    eval_runner_helper.generate_leaderboard_csv(copy.deepcopy(table), Path(tempfile.mkdtemp()))
    out = {}
    for model in table:
        shown = MODEL_CONFIG_MAPPING[model.replace("_", "/")].display_name
        combined = _row(kept["data_overall.csv"], shown, 2)
        out[model] = {
            "overall": combined[1],
            "non_live": _row(kept["data_non_live.csv"], shown)[2],
            "live": _row(kept["data_live.csv"], shown)[2],
            "irrelevance": combined[31],
            "multi_turn": _row(kept["data_multi_turn.csv"], shown)[2],
            "agentic": _row(kept["data_agentic.csv"], shown)[2],
        }
    Path(target).write_text(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:3])
