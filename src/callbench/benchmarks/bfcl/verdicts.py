"""BFCL checks as callbench verdicts.

Shared by the single-turn and multi-turn scorers and the result importer.
"""

from __future__ import annotations

import json
from typing import Any

from callbench.benchmarks.bfcl.options import Check
from callbench.plugin import Reason, Verdict


def to_verdict(scorer: str, check: Check, details: dict[str, Any], partial: float | None = None) -> Verdict:
    """A callbench verdict from a BFCL check."""
    reasons = [] if check.valid else [Reason(code=check.error_type, message=_first_message(check))]
    rationale = "pass" if check.valid else f"fail: {check.error_type}"
    return Verdict(
        scorer=scorer,
        passed=check.valid,
        reasons=reasons,
        rationale=rationale,
        partial=partial,
        details={"bfcl": details},
    )


def _first_message(check: Check) -> str:
    if not check.errors:
        return check.error_type
    first = check.errors[0]
    return first if isinstance(first, str) else json.dumps(first, default=str)[:500]
