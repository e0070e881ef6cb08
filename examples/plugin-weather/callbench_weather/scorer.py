"""A scorer of the plugin's own: readings must be in the unit the case asks for."""

from __future__ import annotations

from typing import Any

from callbench.plugin import Case, Reason, Scorer, Trace, Verdict


class UnitsScorer(Scorer):
    """``weather-units``: every ``read_temperature`` call uses the case's ``metadata.unit``
    (default celsius). Not applicable to a case that reads no temperature."""

    name = "weather-units"

    def __init__(self, suite: Any = None) -> None:
        self.suite = suite

    def score(self, case: Case, trace: Trace) -> Verdict:
        wanted = str(case.metadata.get("unit", "celsius"))
        reads = [call for call in trace.calls if call.tool == "read_temperature"]
        if not reads and not any("read_temperature" in step.tools for step in case.expected):
            return Verdict(scorer=self.name, passed=False, applicable=False, rationale="no reading expected")
        reasons = []
        for call in reads:
            unit = (call.arguments or {}).get("unit", "celsius")
            if unit != wanted:
                message = f"call {call.index}: unit {unit!r}, wanted {wanted!r}"
                reasons.append(Reason(code="wrong_unit", message=message, call_index=call.index))
        if not reads:
            reasons.append(Reason(code="no_reading", message="the case reads no temperature"))
        return Verdict(
            scorer=self.name,
            passed=not reasons,
            reasons=reasons,
            rationale="; ".join(r.message for r in reasons),
        )
