"""The example agents as a CI gate: pytest runs callbench's starter suite against each agent, offline.

Each agent's model answers come from a recording made once (``recordings/<agent>/model/``), so the
gate needs no network, no key and no model: ``pytest examples/agents/test_agents_gate.py``. The
thresholds hold on three trials per case: the lower bound of the 95% interval of strict accuracy and
pass^3 (every trial of a case passes). docs/agents.md, "As a CI gate", explains each keyword.

To record again (after changing an agent, its prompt or the suite), point the agents at the live
model and run the same file with ``--callbench-record``::

    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 pytest examples/agents/test_agents_gate.py --callbench-record

(the recordings committed here were made against the scripted OpenAI-compatible server of callbench's
tests, which plays each case's gold calls: ``python tests/agents/test_ci_gate.py record``).
"""

from __future__ import annotations

import pytest

GATE = {
    "suite": "starter",
    "tier": "task-completion-execution",
    "trials": 3,
    "min_accuracy": 0.75,
    "min_pass_k": 0.9,
    "env": {"CALLBENCH_AGENT_MODEL": "scripted"},  # the model name the recordings were made with
}


@pytest.mark.callbench(agent="py:openai_mcp_agent:agent", replay="recordings/openai_mcp", **GATE)
def test_openai_mcp_agent(callbench_gate):
    callbench_gate.check()


@pytest.mark.callbench(agent="py:agents_sdk_agent:agent", replay="recordings/agents_sdk", **GATE)
def test_agents_sdk_agent(callbench_gate):
    pytest.importorskip("agents", reason="the Agents SDK example needs pip install 'callbench[agents]'")
    callbench_gate.check()
