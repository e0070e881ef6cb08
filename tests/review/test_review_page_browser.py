"""The review page in Chromium: two reviewers walk a real run's queue with the "next" key and record
reviews (an overturn with a reason, a manual rubric score); the reviewer files then hold exactly those
entries; errors of the store show on the page; a re-opened page shows the saved decisions; untrusted
text stays text; a POST from another origin is refused."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from callbench.errors import UserError
from callbench.review.page import ReviewServer
from callbench.review.store import ReviewError, read_reviews

PAYLOAD = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 1">'
BAD_400 = "Failed to load resource: the server responded with a status of 400 (Bad Request)"


def _callbench(*args: str) -> None:
    exe = shutil.which("callbench")
    cmd = [exe, *args] if exe else [sys.executable, "-m", "callbench", *args]
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=240)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Run A: noisy:2 on 20 genomics cases plus 3 manual ones; run B: noisy:3 on the same 20 cases
    (the two disagree on some). A manual record's final text carries a script payload."""
    root = tmp_path_factory.mktemp("review-runs")
    a, b, manual = root / "A", root / "B", root / "M"
    _callbench("run", "--model", "noisy:2", "--suite", "genomics", "--limit", "20", "-o", str(a))
    _callbench("run", "--model", "noisy:2", "--suite", "genomics-manual", "--limit", "3", "-o", str(manual))
    _callbench("run", "--model", "noisy:3", "--suite", "genomics", "--limit", "20", "-o", str(b))
    # one run folder with both kinds of cases: append the manual run's records to A's
    lines = (manual / "records.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    at = min(range(len(records)), key=lambda i: records[i]["key"])  # the first manual case in the queue
    records[at]["trace"]["final_text"] = PAYLOAD
    lines[at] = json.dumps(records[at])
    with (a / "records.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return a, b


def _manual_keys(run: Path) -> list[str]:
    out = []
    for line in (run / "records.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("scoring") == "manual" and record["status"] == "completed":
            out.append(record["key"])
    return sorted(out)


def _rubric_of(run: Path, key: str) -> dict[str, Any]:
    for line in (run / "records.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["key"] == key:
            return record["rubric"]
    raise AssertionError(key)


def _key(page: Any, key: str) -> None:
    """Press a key with the focus on the page body (keys typed into a form field are text)."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press(key)


def _expect_next(page: Any) -> str:
    """The case the "next" key must open: the first not yet reviewed after the selected one."""
    items = page.eval_on_selector_all(
        "[data-testid=queue-item]",
        "xs => xs.map(x => [x.dataset.key + ' #' + x.dataset.trial, x.dataset.reviewed,"
        " x.classList.contains('selected')])",
    )
    at = next((i for i, (_, _, sel) in enumerate(items) if sel), -1)
    order = items[at + 1 :] + items[: at + 1]
    return next(name for name, reviewed, _ in order if reviewed == "false")


def _next(page: Any, key: str = "n") -> str:
    expected = _expect_next(page)
    _key(page, key)
    page.wait_for_function(
        "k => { const t = document.querySelector('[data-testid=case-title]');"
        " return t && t.textContent.startsWith(k.replace(' #', ' · trial ')) }",
        arg=expected,
    )
    page.wait_for_selector("[data-testid=case-panel]")
    return expected.split(" #")[0]


def _filter_reason(page: Any, code: str) -> None:
    page.select_option("#f-reason", code)


def _score(page: Any, rubric: dict[str, Any], picks: list[int], note: str) -> dict[str, Any]:
    """Tick level ``picks[i]`` of criterion i, write the note, save; returns the scores chosen."""
    scores = {}
    for criterion, pick in zip(rubric["criteria"], picks, strict=True):
        scale = criterion["scale"]
        levels = scale["levels"] or list(range(scale["min"], scale["max"] + 1))
        page.check(f"[data-criterion='{criterion['id']}'] input[value='{pick}']")
        scores[criterion["id"]] = levels[pick]
    page.fill("[data-scorer=rubric] [data-testid=note]", note)
    page.click("[data-testid=save-scores]")
    page.wait_for_selector("[data-scorer=rubric] [data-testid=saved][data-decision=scored]")
    return scores


def _post(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(
        url + "api/review", data=json.dumps(body).encode(), method="POST", headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _token(page: Any) -> str:
    return json.loads(page.text_content("#review-data"))["token"]


def test_two_reviewers_walk_the_queue(browser: Any, runs: tuple[Path, Path]) -> None:
    page, console = browser
    a, b = runs
    manual = _manual_keys(a)
    assert len(manual) == 3
    expected: dict[str, list[tuple[Any, ...]]] = {"ann": [], "bob": []}
    n_400 = 0

    # ---- ann ----
    server = ReviewServer([a, b], "ann", port=0)
    server.start_background()
    try:
        page.goto(server.url)
        page.wait_for_selector("[data-testid=queue-item]")
        total = page.locator("[data-testid=queue-item]").count()
        assert (
            page.text_content("#q-count")
            == f"{total} of {total} queued cases shown · {total} not yet reviewed by ann"
        )
        listed_manual = page.eval_on_selector_all(
            "[data-testid=queue-item]",
            "xs => xs.map(x => x.dataset.key).filter(k => k.startsWith('genomics-manual:'))",
        )
        assert sorted(listed_manual) == manual  # every manual case is queued, once

        _filter_reason(page, "manual_case")
        assert page.locator("[data-testid=queue-item]").count() == 3
        first = _next(page)
        assert first == manual[0]
        # the whole record: instruction, offered tools, round cards, the final text as literal text
        assert page.locator("[data-testid=round-card]").count() >= 1
        assert page.text_content("[data-testid=final-text]") == PAYLOAD
        # "save scores" with no level ticked: the store's one line, nothing saved
        page.fill("[data-scorer=rubric] [data-testid=note]", "kept")
        page.click("[data-testid=save-scores]")
        page.wait_for_function("document.querySelector('[data-testid=review-error]').textContent !== ''")
        assert page.text_content("[data-testid=review-error]") == (
            f"review of {first} trial 1 (rubric): decision 'scored' needs rubric scores"
        )
        n_400 += 1
        assert page.input_value("[data-scorer=rubric] [data-testid=note]") == "kept"
        rubric = _rubric_of(a, first)
        note = f"ann {PAYLOAD}"
        scores = _score(
            page, rubric, [len(c["scale"]["levels"] or [0, 0]) - 1 for c in rubric["criteria"]], note
        )
        expected["ann"].append((a, first, 1, "rubric", "scored", None, note, scores))
        assert page.text_content("[data-testid=review-error]") == ""
        second = _next(page, "j")
        assert second == manual[1]
        page.click("[data-scorer=rubric] [data-testid=unsure]")
        page.wait_for_selector("[data-scorer=rubric] [data-testid=saved][data-decision=unsure]")
        expected["ann"].append((a, second, 1, "rubric", "unsure", None, "", {}))
        _key(page, "p")  # previous: back to the first manual case
        page.wait_for_function(
            "k => (document.querySelector('[data-testid=case-title]') || {}).textContent?.startsWith(k)",
            arg=first,
        )

        # a case where the two runs disagree: overturn without a reason is refused, then saved with one
        _filter_reason(page, "runs_disagree")
        page.select_option("#f-run", "0")
        disputed = _next(page)
        form = page.locator("[data-testid=scorer-review][data-scorer=native-function-contract]")
        automatic = form.locator("[data-testid=automatic]").text_content()
        flip = "overturn_fail" if automatic == "automatic: pass" else "overturn_pass"
        form.locator("[data-testid=note]").fill("looks equivalent")
        form.locator("[data-testid=overturn]").click()
        page.wait_for_function(
            "() => document.querySelector("
            "'[data-scorer=native-function-contract] [data-testid=review-error]').textContent !== ''"
        )
        n_400 += 1
        assert form.locator("[data-testid=review-error]").text_content() == (
            f"review of {disputed} trial 1 (native-function-contract): decision '{flip}' needs a reason code"
        )
        assert form.locator("[data-testid=note]").input_value() == "looks equivalent"  # nothing lost
        form.locator("[data-testid=reason]").select_option("scorer_too_strict")
        form.locator("[data-testid=overturn]").click()
        page.wait_for_selector(
            f"[data-scorer=native-function-contract] [data-testid=saved][data-decision={flip}]"
        )
        assert form.locator("[data-testid=review-error]").text_content() == ""
        expected["ann"].append(
            (a, disputed, 1, "native-function-contract", flip, "scorer_too_strict", "looks equivalent", {})
        )
        tier = page.locator("[data-testid=scorer-review][data-scorer=real-tool-execution]")
        tier.locator("[data-testid=agree]").click()
        page.wait_for_selector("[data-scorer=real-tool-execution] [data-testid=saved][data-decision=agree]")
        expected["ann"].append((a, disputed, 1, "real-tool-execution", "agree", None, "", {}))

        # a POST from a page elsewhere is refused, whatever it carries
        token = _token(page)
        body = {"run": 0, "key": first, "trial": 1, "scorer": "rubric", "decision": "unsure"}
        own = server.url.rstrip("/")
        json_type = {"Content-Type": "application/json"}
        assert (
            _post(server.url, body, {**json_type, "Origin": "http://evil.example", "X-Review-Token": token})[
                0
            ]
            == 403
        )
        assert _post(server.url, body, {**json_type, "Origin": own})[0] == 403  # no token
        assert _post(server.url, body, {**json_type, "Origin": own, "X-Review-Token": "guess"})[0] == 403
        assert (
            _post(server.url, body, {"Content-Type": "text/plain", "Origin": own, "X-Review-Token": token})[0]
            == 403
        )
        status, text = _post(
            server.url, body, {**json_type, "Origin": own, "X-Review-Token": token, "Host": "evil.example:80"}
        )
        assert status == 403 and "Host" in text
        # the script payload in the final text never ran
        assert page.evaluate("() => window.__pwned") is None

        # a re-opened page shows the saved decisions
        page.goto(server.url)
        page.wait_for_selector("[data-testid=queue-item]")
        page.click(f"[data-testid=queue-item][data-key='{first}']")
        page.wait_for_selector("[data-scorer=rubric] [data-testid=saved][data-decision=scored]")
        assert page.input_value("[data-scorer=rubric] [data-testid=note]") == note
        for cid, level in scores.items():
            checked = page.eval_on_selector(f"[data-criterion='{cid}'] input:checked", "x => x.dataset.level")
            assert checked == str(level)
        assert PAYLOAD in page.text_content("[data-scorer=rubric] [data-testid=saved]")
        assert page.locator("[data-testid=case-view] img, [data-testid=case-view] script").count() == 0
        page.click(f"[data-testid=queue-item][data-run='0'][data-key='{disputed}']")
        page.wait_for_selector(
            f"[data-scorer=native-function-contract] [data-testid=saved][data-decision={flip}]"
        )
        assert (
            page.locator("[data-scorer=native-function-contract] [data-testid=reason]").input_value()
            == "scorer_too_strict"
        )
        reviewed = page.eval_on_selector_all(
            "[data-testid=queue-item][data-reviewed=true]", "xs => xs.map(x => x.dataset.key)"
        )
        # "unsure" is the reviewer's answer (reviewed); the disputed case still has tiers ann left open
        assert sorted(reviewed) == sorted([first, second])
        assert page.evaluate("() => window.__pwned") is None
    finally:
        server.close()

    # ---- bob, on the same runs: ann's reviews are not his ----
    server = ReviewServer([a, b], "bob", port=0)
    server.start_background()
    try:
        page.goto(server.url)
        page.wait_for_selector("[data-testid=queue-item]")
        assert page.text_content("#q-count").endswith(f"{total} not yet reviewed by bob")
        _filter_reason(page, "manual_case")
        assert _next(page) == first
        rubric = _rubric_of(a, first)
        bob_scores = _score(page, rubric, [0 for _ in rubric["criteria"]], "bob disagrees")
        expected["bob"].append((a, first, 1, "rubric", "scored", None, "bob disagrees", bob_scores))
        _filter_reason(page, "runs_disagree")
        page.select_option("#f-run", "0")
        assert _next(page) == disputed
        page.locator("[data-scorer=native-function-contract] [data-testid=agree]").click()
        page.wait_for_selector(
            "[data-scorer=native-function-contract] [data-testid=saved][data-decision=agree]"
        )
        expected["bob"].append((a, disputed, 1, "native-function-contract", "agree", None, "", {}))
    finally:
        server.close()

    # the files hold exactly those entries, in each case's own run folder
    got: dict[str, list[tuple[Any, ...]]] = {"ann": [], "bob": []}
    for run in (a, b):
        for e in read_reviews(run):
            got[e.reviewer].append((run, e.key, e.trial, e.scorer, e.decision, e.reason, e.note, e.scores))
    assert got == expected
    assert sorted(p.name for p in (a / "reviews").iterdir()) == ["ann.jsonl", "bob.jsonl"]
    assert not (b / "reviews").exists()
    assert [e for e in console.errors if e != BAD_400] == []
    assert console.errors.count(BAD_400) == n_400


def test_server_refuses_bad_reviewer_and_folder(tmp_path: Path, runs: tuple[Path, Path]) -> None:
    with pytest.raises(ReviewError, match="reviewer name '../evil' is not allowed"):
        ReviewServer([runs[0]], "../evil", port=0)
    with pytest.raises(UserError, match="not a run folder"):
        ReviewServer([tmp_path], "ann", port=0)
    server = ReviewServer([runs[0]], "ann", port=0)
    try:
        assert server.url.startswith("http://127.0.0.1:")
    finally:
        server.close()
