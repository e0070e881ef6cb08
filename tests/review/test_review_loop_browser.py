"""The review loop end to end (issue 17 "Done when"), through the installed console script and Chromium:

1. ``callbench run`` makes a run with failures and manual cases;
2. ``callbench review RUN --reviewer ann`` (then ``bob``) serves the page; each walks the queue with the
   ``n`` key and records agree / overturn (with a reason) / unsure on a scorer, and rubric scores on
   manual cases, some of bob's decisions differing from ann's;
3. ``callbench review agreement RUN`` prints the Cohen's κ computed here by hand from the decisions
   entered, and exactly the items where ann and bob differ; ``--consensus ann`` writes one entry per
   disagreement;
4. ``callbench report RUN`` shows, in Chromium, automatic and reviewed accuracy side by side, equal to
   the figures computed here, while the grid above keeps the automatic figure.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

TIER = "native-function-contract"
QUEUE_REASON = "ok_calls_yet_failed"  # why noisy:1's failed-yet-clean cases are queued
# Decisions on TIER for the queued automatic cases, in queue order: A agree, O overturn (to pass,
# every queued verdict of this run fails), U unsure. ann and bob differ on cases 2 and 3; each is
# unsure on one case the other decided.
ANN = "AOAOUAOAA"
BOB = "AOOAAAOUA"
REASONS = {1: "scorer_too_strict", 3: "equivalent_call", 6: "gold_wrong", 2: "scorer_too_strict"}


def _exe() -> str:
    script = Path(sys.executable).with_name("callbench")
    exe = str(script) if script.exists() else shutil.which("callbench")
    assert exe, "the callbench console script is not installed"
    return exe


def _callbench(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([_exe(), *argv], cwd=cwd, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"callbench {' '.join(argv)}: {done.stderr}"
    return done


@contextmanager
def _review_page(run: Path, reviewer: str) -> Iterator[str]:
    """``callbench review RUN --reviewer NAME --port 0`` as a subprocess; yields the URL it prints."""
    proc = subprocess.Popen(
        [_exe(), "review", str(run), "--reviewer", reviewer, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        prefix = f"reviewing {run} as {reviewer} at "
        assert line.startswith(prefix), (line, proc.stderr.read() if proc.poll() is not None else "")
        url = line[len(prefix) :].split(" ")[0]
        assert url.startswith("http://127.0.0.1:")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _records(run: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """The current record of each (key, trial): the last line wins."""
    out = {}
    for line in (run / "records.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        out[record["key"], record["trial"]] = record
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("review-loop")
    _callbench(
        "run", "--model", "noisy:1", "--suite", "genomics", "--suite", "genomics-manual",
        "--limit", "60", "-o", "run", cwd=root,
    )  # fmt: skip
    return root / "run"


def _press(page: Any, key: str) -> None:
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press(key)


def _next(page: Any) -> str:
    """Press ``n``; check it opened the first not-yet-reviewed case after the selected one."""
    items = page.eval_on_selector_all(
        "[data-testid=queue-item]",
        "xs => xs.map(x => [x.dataset.key, x.dataset.reviewed, x.classList.contains('selected')])",
    )
    at = next((i for i, (_, _, selected) in enumerate(items) if selected), -1)
    expected = next(k for k, reviewed, _ in items[at + 1 :] + items[: at + 1] if reviewed == "false")
    _press(page, "n")
    page.wait_for_function(
        "k => (document.querySelector('[data-testid=case-title]') || {})"
        ".textContent?.startsWith(k + ' · trial ')",
        arg=expected,
    )
    page.wait_for_selector("[data-testid=case-panel]")
    return str(expected)


@contextmanager
def _queue_refresh(page: Any) -> Iterator[None]:
    """Wait for the queue the page fetches after a save (so no request is left open when the
    server stops)."""
    with page.expect_response(lambda r: r.url.endswith("/api/queue")):
        yield


def _decide(page: Any, letter: str, reason: str | None, note: str) -> str:
    """Record one decision on TIER through its form; returns the decision stored."""
    form = page.locator(f"[data-testid=scorer-review][data-scorer={TIER}]")
    assert form.locator("[data-testid=automatic]").text_content() == "automatic: fail"
    form.locator("[data-testid=note]").fill(note)
    if letter == "O":
        assert reason is not None
        form.locator("[data-testid=reason]").select_option(reason)
        decision, button = "overturn_pass", "overturn"
    else:
        decision = button = {"A": "agree", "U": "unsure"}[letter]
    with _queue_refresh(page):
        form.locator(f"[data-testid={button}]").click()
    page.wait_for_selector(f"[data-scorer={TIER}] [data-testid=saved][data-decision={decision}]")
    assert form.locator("[data-testid=review-error]").text_content() == ""
    return decision


def _score(page: Any, rubric: dict[str, Any], top: bool) -> dict[str, Any]:
    """Tick every criterion's top (or bottom) level and save; returns the scores given."""
    scores = {}
    for criterion in rubric["criteria"]:
        scale = criterion["scale"]
        levels = scale["levels"] or list(range(scale["min"], scale["max"] + 1))
        pick = len(levels) - 1 if top else 0
        page.check(f"[data-criterion='{criterion['id']}'] input[value='{pick}']")
        scores[criterion["id"]] = levels[pick]
    with _queue_refresh(page):
        page.click("[data-testid=save-scores]")
    page.wait_for_selector("[data-scorer=rubric] [data-testid=saved][data-decision=scored]")
    return scores


def _walk(
    page: Any, run: Path, url: str, plan: str, who: str, manual_top: list[bool]
) -> tuple[list[str], list[str]]:
    """One reviewer's session: rubric scores on the first manual cases, then ``plan`` on TIER over
    the queued automatic cases, each reached with ``n``. Returns (automatic keys, manual keys)."""
    page.goto(url)
    page.wait_for_selector("[data-testid=queue-item]")
    page.select_option("#f-reason", "manual_case")
    manual = []
    for top in manual_top:
        manual.append(_next(page))
        _score(page, _records(run)[manual[-1], 1]["rubric"], top)
    page.select_option("#f-reason", QUEUE_REASON)
    keys = []
    for i, letter in enumerate(plan):
        keys.append(_next(page))
        _decide(page, letter, REASONS.get(i) if letter == "O" else None, f"{who} on case {i}")
    # Leave the page before the server stops: a request still in flight when the process is
    # terminated is cut mid-body, which Chromium logs as ERR_CONTENT_LENGTH_MISMATCH.
    page.wait_for_load_state("networkidle")
    page.goto("about:blank")
    return keys, manual


def _kappa(pairs: list[tuple[bool, bool]]) -> float:
    """Cohen's κ from the 2x2 table counted here: κ = (p_o − p_e) / (1 − p_e)."""
    n = len(pairs)
    both_pass = sum(a and b for a, b in pairs)
    both_fail = sum(not a and not b for a, b in pairs)
    a_pass = sum(a for a, _ in pairs) / n
    b_pass = sum(b for _, b in pairs) / n
    p_o = (both_pass + both_fail) / n
    p_e = a_pass * b_pass + (1 - a_pass) * (1 - b_pass)
    return (p_o - p_e) / (1 - p_e)


def test_two_reviewers_agreement_consensus_and_report(browser: Any, run: Path) -> None:
    page, console = browser
    queued = [
        k
        for k, r in _records(run).items()
        if r.get("scoring") != "manual" and r["status"] == "completed" and not r["verdicts"][TIER]["passed"]
    ]
    assert len(queued) >= len(ANN)  # enough failed verdicts for the plan

    # ---- 2. two reviewers walk the queue with "n" ----
    with _review_page(run, "ann") as url:
        ann_keys, ann_manual = _walk(page, run, url, ANN, "ann", [True, True])
    with _review_page(run, "bob") as url:
        bob_keys, bob_manual = _walk(page, run, url, BOB, "bob", [False, True])
    assert ann_keys == bob_keys and len(set(ann_keys)) == len(ANN)  # the same cases, in queue order
    assert ann_manual == bob_manual and len(set(ann_manual)) == 2
    assert console.errors == []

    def label(letter: str) -> bool | None:  # the verdict a decision stands for (automatic: fail)
        return {"A": False, "O": True, "U": None}[letter]

    ann = {k: label(x) for k, x in zip(ann_keys, ANN, strict=True)}
    bob = {k: label(x) for k, x in zip(bob_keys, BOB, strict=True)}
    stored = {
        (e["reviewer"], e["key"], e["scorer"]): e["decision"]
        for name in ("ann", "bob")
        for e in map(json.loads, (run / "reviews" / f"{name}.jsonl").read_text().splitlines())
    }
    assert len(stored) == 2 * (len(ANN) + 2)
    assert stored["ann", ann_keys[1], TIER] == "overturn_pass" and stored["bob", ann_keys[4], TIER] == "agree"

    # ---- 3. agreement: κ by hand, disagreements, consensus ----
    shared = [(ann[k], bob[k]) for k in ann_keys if ann[k] is not None and bob[k] is not None]
    kappa = _kappa([(bool(a), bool(b)) for a, b in shared])
    assert kappa == pytest.approx(10 / 24)  # the plan's table: 2 pass/pass, 3 fail/fail, 1 + 1 apart
    differ = sorted(k for k in ann_keys if None not in (ann[k], bob[k]) and ann[k] != bob[k])
    assert len(differ) == 2
    text = _callbench("review", "agreement", str(run), cwd=run.parent).stdout
    section = text.split(f"\n{TIER}  (")[1].split("\n\n")[0]
    assert f"ann vs bob: Cohen's κ {kappa:.2f} [" in section and f"(n={len(shared)}, asymptotic)" in section
    data = json.loads(_callbench("review", "agreement", str(run), "-f", "json", cwd=run.parent).stdout)
    tier = next(s for s in data["sections"] if s["name"] == TIER)
    assert tier["between"][0]["estimate"] == pytest.approx(kappa, abs=1e-12)
    assert tier["between"][0]["n"] == len(shared)
    # the printed disagreements: exactly the tier's differing cases and the manual case scored apart
    listed = text.split("\nDisagreements (")[1].split("\nSuspects (")[0]
    heads = sorted(
        line.strip()
        for line in listed.splitlines()[1:]
        if line.startswith("  ") and not line.startswith("    ")
    )
    expected_heads = sorted(
        [f"{key} trial 1 · {TIER} (automatic: fail)" for key in differ]
        + [f"{ann_manual[0]} trial 1 · rubric (manual case)"]
    )
    assert listed.splitlines()[0] == f"{len(expected_heads)})"
    assert heads == expected_heads

    done = _callbench("review", "agreement", str(run), "--consensus", "ann", cwd=run.parent).stdout
    assert (
        f"consensus: recorded {len(expected_heads)} entries taking ann's decision; 0 already settled" in done
    )
    consensus = [json.loads(x) for x in (run / "reviews" / "consensus.jsonl").read_text().splitlines()]
    assert sorted((e["key"], e["scorer"]) for e in consensus) == sorted(
        [(k, TIER) for k in differ] + [(ann_manual[0], "rubric")]
    )
    for e in consensus:
        assert e["reviewer"] == "consensus"
        if e["scorer"] == TIER:
            assert e["decision"] == ("overturn_pass" if ann[e["key"]] else "agree")

    # ---- 4. the report: reviewed beside automatic, the grid untouched ----
    records = _records(run)
    automatic = {
        k: r["verdicts"][TIER]["passed"] for (k, _t), r in records.items() if r.get("scoring") != "manual"
    }
    assert len(automatic) == len([k for k in records if not k[0].startswith("genomics-manual:")])  # one trial
    settled = {}
    for k in ann_keys:  # consensus (ann) where they differ, else the outcome of whoever decided
        decided = {x for x in (ann[k], bob[k]) if x is not None}
        settled[k] = ann[k] if len(decided) > 1 else decided.pop()
    auto_acc = sum(automatic.values()) / len(automatic)
    reviewed_acc = sum(settled.get(k, passed) for k, passed in automatic.items()) / len(automatic)
    assert reviewed_acc - auto_acc == pytest.approx(3 / len(automatic))  # cases 1, 3 (consensus), 6
    summary = json.loads((run / "summary.json").read_text())
    _callbench("report", str(run), "-o", "r.html", cwd=run.parent)
    page.goto((run.parent / "r.html").as_uri())
    page.wait_for_selector("[data-testid=reviewed-row]")
    row = page.locator(f"[data-testid=reviewed-row][data-run='0'][data-tier={TIER}]")
    assert float(row.locator("td.auto").get_attribute("data-value")) == pytest.approx(auto_acc)
    assert float(row.locator("td.reviewed").get_attribute("data-value")) == pytest.approx(reviewed_acc)
    assert row.locator("td.auto").text_content() != row.locator("td.reviewed").text_content()
    assert row.locator("td.overturned").text_content() == "3 (3/0)"
    assert row.locator("td.reasons").text_content() == "equivalent_call 1; gold_wrong 1; scorer_too_strict 1"
    rubric = page.locator("[data-testid=reviewed-row][data-run='0'][data-tier=rubric]")
    assert float(rubric.locator("td.reviewed").get_attribute("data-value")) == pytest.approx(
        1.0
    )  # top levels
    card = page.locator(f"[data-testid=card][data-tier={TIER}]")
    assert card.count() == 1
    assert float(card.get_attribute("data-value")) == pytest.approx(auto_acc)  # never replaced
    assert summary_accuracy(summary, TIER) == pytest.approx(auto_acc)
    assert console.errors == []


def summary_accuracy(summary: dict[str, Any], tier: str) -> float:
    """The run's automatic accuracy of ``tier`` as ``summary.json`` records it."""
    return float(summary["tiers"][tier]["accuracy"])
