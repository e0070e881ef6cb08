"""The baseline agent sees only what a model sees: instruction, offered schemas and tool results."""

from __future__ import annotations

import asyncio

from core_helpers import obj

from callbench.benchmarks.genomics.suite import load_all
from callbench.providers.agents.baseline import BaselineAgent
from callbench.tools.retrieve import select_tools
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message


def _first_call(tools: list[ToolContract], request: str) -> str | None:
    turn = asyncio.run(BaselineAgent().generate([Message.user(request)], tools, GenerationSettings()))
    return turn.tool_calls[0].name if turn.tool_calls else None


def test_keywords_and_category_do_not_steer_the_baseline() -> None:
    tools = [
        ToolContract(
            name="alpha_op",
            description="Compute a primer melting temperature.",
            category="gc content",
            keywords=["gc content", "gc"],
            parameters=obj({}),
        ),
        ToolContract(name="beta_op", description="Measure the GC content of a region.", parameters=obj({})),
    ]
    assert _first_call(tools, "What is the GC content here?") == "beta_op"


def test_stripping_hidden_fields_changes_no_baseline_call() -> None:
    suite = load_all()
    for case in suite.cases[::5]:
        offered = select_tools(case.prompt_text(), suite.candidate_tools(case), 24)
        blind = [
            t.model_copy(update={"keywords": [], "category": "general", "metadata": {}}) for t in offered
        ]
        assert _first_call(offered, case.prompt_text()) == _first_call(blind, case.prompt_text()), case.id


def test_file_types_come_from_the_suite_vocabulary_not_the_core() -> None:
    from callbench.providers.agents.baseline import file_pattern, fill_arguments
    from callbench.types.case import Case

    tool = ToolContract(
        name="load_file",
        description="Load a file.",
        parameters=obj({"filePath": {"type": "string"}}, ["filePath"]),
    )
    generic = fill_arguments(tool, "load data/genome.gbk", "load data/genome.gbk", [])
    assert generic == {}  # .gbk is no generic file type
    case = Case(id="c", instruction="x", metadata={"vocabulary": {"file_types": ["gbk"]}})
    agent = BaselineAgent().for_case(case)
    assert isinstance(agent, BaselineAgent) and "gbk" in agent.file_types
    found = fill_arguments(
        tool, "load data/genome.gbk", "load data/genome.gbk", [], file_pattern(agent.file_types)
    )
    assert found == {"filePath": "genome.gbk"}
