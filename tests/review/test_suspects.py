"""Suspect rules and cases (``review/suspects.py``) from reviews of a real noisy run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from callbench.review.store import CurrentRecord, append_review, current_records, new_entry, read_reviews
from callbench.review.suspects import argument_kind, find_suspects, overturns

TIER = "native-function-contract"


@pytest.fixture(scope="module")
def base_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("suspects")
    exe = Path(sys.executable).with_name("callbench")
    cmd = [str(exe if exe.exists() else shutil.which("callbench"))]
    done = subprocess.run(
        [*cmd, "run", "--model", "noisy:2", "--suite", "genomics", "--limit", "30", "-o", "run"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return root / "run"


@pytest.fixture()
def run(base_run, tmp_path) -> Path:
    shutil.copytree(base_run, tmp_path / "run")
    return tmp_path / "run"


def _failed_with(run: Path, code: str) -> list[tuple[str, int]]:
    out = []
    for key, c in sorted(current_records(run).items()):
        v = c.record.verdicts.get(TIER)
        if v is not None and v.applicable and not v.passed and v.reasons and v.reasons[0].code == code:
            out.append(key)
    return out


def _overturn(run, reviewer, key, reason):
    append_review(run, new_entry(run, reviewer, key[0], key[1], TIER, "overturn_pass", reason=reason))


def test_rule_suspect_at_threshold_not_below(run):
    cases = _failed_with(run, "tool_missing")
    assert len(cases) >= 3
    for key in cases[:2]:
        _overturn(run, "ann", key, "scorer_too_strict")
    assert [s for s in find_suspects(run) if s.kind == "rule"] == []
    _overturn(run, "ann", cases[2], "equivalent_call")
    rules = [s for s in find_suspects(run) if s.kind == "rule"]
    assert len(rules) == 1
    s = rules[0]
    assert s.text == (
        f"3 overturns of `tool_missing` in suite genomics by scorer {TIER} "
        "(scorer_too_strict ×2, equivalent_call ×1)"
    )
    assert (s.scorer, s.reason_code, s.suite, s.count) == (TIER, "tool_missing", "genomics", 3)
    assert s.keys == tuple(sorted(k for k, _t in cases[:3]))
    assert [x.kind for x in find_suspects(run, threshold=4)] == []


def test_disputed_overturns_do_not_count(run):
    cases = _failed_with(run, "tool_missing")[:3]
    for key in cases:
        _overturn(run, "ann", key, "scorer_too_strict")
    append_review(run, new_entry(run, "bob", cases[0][0], cases[0][1], TIER, "agree"))
    assert [s for s in find_suspects(run) if s.kind == "rule"] == []  # one is disputed: 2 left
    append_review(
        run, new_entry(run, "consensus", cases[0][0], cases[0][1], TIER, "overturn_pass", reason="other")
    )
    (rule,) = [s for s in find_suspects(run) if s.kind == "rule"]
    assert rule.review_reasons == {"other": 1, "scorer_too_strict": 2}


def test_argument_kind_of_the_named_argument(run):
    cases = _failed_with(run, "argument_mismatch")
    assert len(cases) >= 2
    for key in cases:
        _overturn(run, "ann", key, "scorer_too_strict")
    (rule,) = [s for s in find_suspects(run, threshold=len(cases)) if s.kind == "rule"]
    assert rule.argument_kind == "literal"
    assert rule.text.startswith(
        f"{len(cases)} overturns of `argument_mismatch` on literal arguments in suite genomics"
    )
    # the same records with the named argument expected as a $ref: the suspect says so
    records = current_records(run)
    changed = dict(records)
    for key in cases:
        c = records[key]
        reason = c.record.verdicts[TIER].reasons[0]
        name = reason.message.split("parameter '", 1)[1].split("'", 1)[0]
        expected = [dict(s) for s in c.record.expected]
        step = next(s for s in expected if s["id"] == reason.step)
        step["arguments"] = {**step["arguments"], name: {"$ref": "earlier.value"}}
        changed[key] = CurrentRecord(c.record.model_copy(update={"expected": expected}), c.hash, c.line)
    found = overturns(read_reviews(run), changed)
    assert {o.argument_kind for o in found} == {"$ref"}
    (rule,) = find_suspects(run, threshold=2, records=changed)
    assert "on `$ref` arguments in suite genomics" in rule.text


def test_argument_kind_operators():
    assert argument_kind({"$one_of": [{"$ref": "a.b"}, "x"]}) == "$one_of"
    assert argument_kind({"$pattern": "^a"}) == "$pattern"
    assert argument_kind({"$default": 2}) == "$default"
    assert argument_kind({"$any": True}) == "$any"
    assert argument_kind(12000) == "literal"


def test_gold_suspect_needs_every_reviewer(run):
    key = _failed_with(run, "tool_missing")[0]
    _overturn(run, "ann", key, "gold_wrong")
    _overturn(run, "bob", key, "gold_wrong")
    (gold,) = [s for s in find_suspects(run) if s.kind == "gold"]
    assert gold.text == f"case {key[0]}: gold path suspect (2 of 2 reviewers: gold_wrong)"
    assert gold.keys == (key[0],)
    append_review(run, new_entry(run, "cy", key[0], key[1], TIER, "agree"))
    assert [s for s in find_suspects(run) if s.kind == "gold"] == []
