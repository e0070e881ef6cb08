"""A hurried newcomer's mistakes get the usage line and one error line, exit 2, never a traceback.

Run through the console script of a fresh install (typer 0.29 bundles its own click, and importing
``click`` once turned every usage error into a traceback)."""

from __future__ import annotations

import pytest
from fresh_cli import FreshCli, assert_clean_error


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["run", "genomics"], "Got unexpected extra argument(s) (genomics)"),
        (["run", "--suit", "starter"], "No such option: --suit"),
        (["rn"], "No such command 'rn'. Did you mean 'run'?"),
        (["run", "--concurrency", "many"], "Invalid value for '--concurrency'"),
        (["run", "--suite"], "Option '--suite' requires an argument"),
    ],
)
def test_usage_errors_are_one_clear_line(fresh_cli: FreshCli, argv: list[str], says: str) -> None:
    stderr = assert_clean_error(fresh_cli.run(*argv), 2, says)
    # click names the command's usage when it knows the command (not for a missing option value).
    assert "Usage: callbench" in stderr or "requires an argument" in says


def test_a_bare_model_name_says_how_to_name_its_provider(fresh_cli: FreshCli) -> None:
    done = fresh_cli.run("run", "-s", "starter", "-m", "gpt-4o")
    stderr = assert_clean_error(done, 2, "unknown model 'gpt-4o': write PROVIDER:MODEL, e.g. 'openai:gpt-4o'")
    assert len(stderr.strip().splitlines()) == 1
    # A near miss of a provider keeps its did-you-mean.
    assert_clean_error(fresh_cli.run("run", "-s", "starter", "-m", "oracel"), 2, "did you mean 'oracle'?")
