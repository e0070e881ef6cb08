"""The genomics registry: size, categories, generated contracts in sync, bindings, contract executor."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml

from callbench.benchmarks.genomics.bindings import BINDINGS, SPECS
from callbench.benchmarks.genomics.registry_io import contract_yaml, load_registry, registry_dir
from callbench.executors.base import run_sync
from callbench.executors.contract import ContractExecutor
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case
from callbench.types.dsl import placeholder_value

REQUIRED_CATEGORIES = {
    "navigation",
    "tracks",
    "track_settings",
    "tabs_windows",
    "sequence",
    "sequence_editing",
    "annotation",
    "search",
    "restriction_gel",
    "primer_design",
    "blast_local",
    "protein",
    "file_loading",
    "export",
    "task_management",
    "system_ui",
}


def test_registry_size_and_categories() -> None:
    registry = load_registry()
    categories = Counter(t.category for t in registry)
    assert len(registry) >= 120
    assert len(categories) >= 15
    assert REQUIRED_CATEGORIES <= set(categories)


def test_one_contract_file_per_tool_in_its_category_folder() -> None:
    files = sorted(registry_dir().rglob("*.yaml"))
    assert len(files) == len(SPECS)
    for path in files:
        data = yaml.safe_load(path.read_text())
        assert path.stem == data["name"] and path.parent.name == data["category"], path


def test_checked_in_contracts_match_the_declarations() -> None:
    for name, spec in SPECS.items():
        path = registry_dir() / spec.category / f"{name}.yaml"
        assert path.read_text() == contract_yaml(spec), (
            f"{path.name} is stale: run scripts/make_genomics_registry.py"
        )


def test_loaded_registry_equals_the_generic_loader() -> None:
    fast = load_registry()
    generic = ToolRegistry.from_dir(registry_dir())
    assert fast.hash == generic.hash


def test_every_contract_has_an_implementation_and_vice_versa() -> None:
    assert set(BINDINGS) == set(load_registry().names())


def test_contracts_are_strict_and_documented() -> None:
    for tool in load_registry():
        params = tool.parameters
        assert params.get("additionalProperties") is False, tool.name
        assert tool.description and tool.keywords, tool.name
        for key, prop in params.get("properties", {}).items():
            assert prop.get("description") or "anyOf" in prop, f"{tool.name}.{key} lacks a description"
        assert set(params.get("required", [])) <= set(params.get("properties", {})), tool.name


def test_relationships_are_declared_where_natural() -> None:
    registry = load_registry()
    (export_rule,) = registry.get("export_genbank_format").follow_ups()
    assert export_rule.tool == "execute_actions" and export_rule.same_values == {"filename": "result.savedTo"}
    followed = {rule.tool for rule in registry.get("execute_actions").follow_ups()}
    assert {"replace_sequence", "insert_sequence", "paste_sequence"} <= followed
    assert "translate_sequence" in registry.equivalents("translate_dna")
    assert "blast_create_quick_db_for_current_genome" in registry.equivalents("blast_create_db_from_genome")
    assert registry.get("navigate_to_position").alternative_keys == {"position": [["start"]]}
    read_only = {t.name for t in registry if t.read_only}
    assert {"get_sequence", "list_annotations", "blast_search_local"} <= read_only
    assert not {"toggle_track", "create_annotation", "execute_actions"} & read_only


def test_remote_tools_say_they_answer_from_a_fixture() -> None:
    for tool in load_registry():
        if tool.category == "remote_databases" and tool.name != "open_protein_viewer":
            assert "offline fixture" in tool.description, tool.name


def test_contract_executor_answers_every_tool(tmp_path: Path) -> None:
    registry = load_registry()
    suite_like = type("S", (), {"registry_for": lambda self, case: registry})()
    case = Case(id="probe", instruction="probe")
    session = ContractExecutor().start(case, tmp_path, suite_like)
    for tool in registry:
        props = tool.parameters.get("properties", {})
        args = {k: placeholder_value(props[k]) for k in tool.parameters.get("required", [])}
        outcome = run_sync(session.call(tool.name, args))
        assert outcome.ok, (tool.name, outcome.error)
        if tool.result_schema:
            assert isinstance(outcome.result, dict)
            assert set(tool.result_schema["properties"]) <= set(outcome.result), tool.name


def test_referenced_result_fields_are_declared_for_the_contract_executor() -> None:
    """A $ref must resolve against synthetic results too, so its field is in the tool's result schema."""
    from callbench.benchmarks.genomics.suite import load_complex
    from callbench.types.case import REF_PATTERN, iter_dsl

    suite = load_complex()
    for case in suite.cases:
        steps = {s.id: s for s in case.expected}
        for step in case.expected:
            for marker in iter_dsl(step.arguments):
                if "$ref" not in marker:
                    continue
                match = REF_PATTERN.match(marker["$ref"])
                field = match.group("path").split(".")[0].split("[")[0]
                for tool in steps[match.group("step")].tools:
                    schema = suite.registry.get(tool).result_schema or {}
                    assert field in schema.get("properties", {}), (case.id, tool, field)


def test_python_executor_never_crashes_on_schema_valid_nonsense(tmp_path: Path) -> None:
    """Placeholder arguments ('value', 1, ...) make most tools fail, but as tool errors, not exceptions."""
    from callbench.benchmarks.genomics.suite import make_executor

    registry = load_registry()
    case = Case(id="probe", instruction="probe")
    session = make_executor().start(case, tmp_path / "ws", None)
    crashes = []
    for tool in registry:
        props = tool.parameters.get("properties", {})
        args = {k: placeholder_value(props[k]) for k in tool.parameters.get("required", [])}
        outcome = run_sync(session.call(tool.name, args))
        if not outcome.ok and "traceback" in outcome.annotations:
            crashes.append((tool.name, outcome.error))
    assert crashes == []


def test_read_only_tools_leave_the_state_unchanged(tmp_path: Path) -> None:
    """Replay every gold path; each call of a read-only tool must leave the snapshot as it was."""
    from callbench.benchmarks.genomics.suite import load_all, make_executor
    from callbench.types.case import REF_PATTERN
    from callbench.types.dsl import follow_path, realize

    suite = load_all()
    checked = 0
    for index, case in enumerate(suite.cases):
        session = make_executor().start(case, tmp_path / str(index), suite)
        results: dict[str, object] = {}

        def lookup(ref: str, results: dict[str, object] = results) -> tuple[bool, object]:
            match = REF_PATTERN.match(ref)
            return follow_path(results.get(match.group("step")), match.group("path") or "")

        for step in case.expected:
            contract = suite.registry.get(step.tools[0])
            if step.call_only:
                continue
            before = session.snapshot()
            outcome = run_sync(
                session.call(contract.name, realize(step.arguments, lookup, contract.parameters))
            )
            results[step.id] = outcome.result
            if contract.read_only:
                checked += 1
                assert session.snapshot() == before, (case.id, contract.name)
    assert checked > 80
