"""One ``--case`` rule wherever a case id is shown, and what ``--tier all`` means for each suite."""

from __future__ import annotations

import pytest

from callbench.errors import UserError
from callbench.harness.prepare import build_scorers, check_selection, diagnostic_scorers
from callbench.suites.resolve import load_suite
from callbench.suites.suite import DEFAULT_TIERS, Suite
from callbench.types.case import Case


def bare(name: str, ids: list[str], **kw: object) -> Suite:
    cases = [Case(id=i, instruction="x") for i in ids]
    return Suite(name=name, cases=cases, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("suite", "selector", "selected"),
    [
        (bare("genomics", ["simple/a", "complex/b"]), "complex/b", ["complex/b"]),  # as shown
        (bare("genomics", ["simple/a", "complex/b"]), "b", ["complex/b"]),  # the bare id
        (bare("genomics", ["simple/a", "complex/b"]), "genomics:simple/a", ["simple/a"]),  # record key
        (bare("genomics-complex", ["b", "c"]), "complex/b", ["b"]),  # a combined suite's form
        (bare("genomics-complex", ["b", "c"]), "genomics-complex:c", ["c"]),
        (bare("genomics-complex", ["b", "c"]), "simple/b", []),  # another part's id
        (bare("starter", ["b"]), "x/b", []),
    ],
)
def test_one_case_rule(suite: Suite, selector: str, selected: list[str]) -> None:
    assert [c.id for c in suite.select([selector])] == selected


def test_a_selection_of_nothing_names_the_ids_that_exist() -> None:
    suite = load_suite("starter")
    with pytest.raises(UserError) as info:
        check_selection([suite], ["weather_pari"])
    message = str(info.value)
    assert message.startswith("--case 'weather_pari': no case of suite 'starter' has this id")
    assert "did you mean 'weather_paris'" in message and "(16 in all)" in message
    check_selection([suite], ["weather_paris", "starter:convert_distance"])  # no error


def test_all_adds_the_strict_tiers_to_the_suites_own_scorers() -> None:
    genomics = bare("g", ["a"], scorers=[*DEFAULT_TIERS, "state-match"])
    assert genomics.expand_scorers(["all"]) == [*DEFAULT_TIERS, "state-match"]
    assert genomics.expand_scorers(["all", "state-match"]) == genomics.expand_scorers(["all"])
    assert genomics.expand_scorers([]) == genomics.scorers
    plain = bare("p", ["a"])
    assert plain.expand_scorers(["state-match", "all"]) == ["state-match", *DEFAULT_TIERS]


def test_a_suite_with_its_own_primary_scorer_keeps_it_under_all() -> None:
    dag = load_suite("dag:n_core=3;depth=1;seeds=1")
    assert dag.expand_scorers(["all"]) == ["dag"]
    scorers = {dag.name: build_scorers(dag, ["all", "native-function-contract"])}
    assert list(scorers["dag"]) == ["dag", "native-function-contract"]
    # a tier named on such a suite runs, and its row says it is diagnostic
    assert diagnostic_scorers([dag], scorers) == ["native-function-contract"]
    genomics = load_suite("genomics-simple")
    both = {genomics.name: build_scorers(genomics, ["all"])}
    assert diagnostic_scorers([genomics], both) == ["state-match"]
