"""Item 21: run.json records the installed bfcl-eval version of a BFCL run."""

from __future__ import annotations

import importlib.metadata

from callbench.cli.main import main
from callbench.harness.runfolder import read_header


def test_run_json_records_bfcl_eval_version(tmp_path, bfcl_folder):
    out = tmp_path / "run"
    assert (
        main(
            [
                "run",
                "--suite",
                "bfcl:simple_python",
                "--model",
                "oracle",
                "--option",
                "limit=1",
                "--out",
                str(out),
                "--progress",
                "quiet",
            ]
        )
        == 0
    )
    suite = read_header(out).suites[0]
    assert suite.data_versions == {"bfcl-eval": importlib.metadata.version("bfcl-eval")}
