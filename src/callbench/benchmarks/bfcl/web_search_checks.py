"""The ``bfcl`` verdict of an agentic entry from its callbench trace (web search).

BFCL judges an agentic entry on the last of the model's steps that does not decode as calls, with its
agentic checker (:func:`~callbench.benchmarks.bfcl.agentic.judge_episode`, shared with memory):

* a round without calls is such a step, its text the message (an empty text counts, and leaves
  BFCL's ``agentic:no_last_message`` when it is the last such step);
* a round whose calls do not all decode (arguments that are not JSON) is one too: BFCL's checker then
  reads it as the text of the first call, ``{name: arguments}``;
* a round of decodable calls is not.

The verdict is the same in both modes (improved mode changes what the tools answer, through the
failure injection, never the check); its details record the injection's settings and draws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from callbench.benchmarks.bfcl.agentic import judge_episode
from callbench.benchmarks.bfcl.verdicts import to_verdict

if TYPE_CHECKING:
    from callbench.benchmarks.bfcl.options import BfclOptions
    from callbench.plugin import Case, Trace, Verdict


def score_web_search(case: Case, trace: Trace, options: BfclOptions) -> Verdict:
    """The ``bfcl`` verdict of a web search case."""
    state = (trace.final_state or {}).get("bfcl", {})
    check, details = judge_episode(case.metadata["bfcl"], trace, state, options)
    if options.improved:
        details["web_failures"] = state.get("web_failures") or {"rate": 0.0}
    return to_verdict("bfcl", check, details)
