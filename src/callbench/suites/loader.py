"""Load native callbench suites from YAML or JSONL files and folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from callbench.errors import ConfigError, SuiteError
from callbench.suites.bindings import load_bindings
from callbench.suites.suite import BINDINGS_EXECUTOR, DEFAULT_SYSTEM_PROMPT, DEFAULT_TIERS, Suite
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case

SUITE_FILE_NAMES = ("suite.yaml", "suite.yml", "suite.json")
TOOL_SOURCE_KEY = "tool_source"
"""``suite.yaml``'s declaration of what the suite needs from a live MCP tool source: ``isolation`` and
``reset`` (docs/mcp.md#isolation); kept in ``Suite.metadata`` under :data:`TOOL_SOURCE_DECLARATION`."""
TOOL_SOURCE_DECLARATION = "tool_source_declaration"
CASE_FILE_GLOBS = ("cases.yaml", "cases.yml", "cases.jsonl", "cases/*.yaml", "cases/*.yml", "cases/*.jsonl")


def load_suite_path(
    path: str | Path,
    *,
    registry: Path | None = None,
    tools: ToolRegistry | None = None,
    executor: Any = None,
) -> Suite:
    """Load a suite from a folder (``suite.yaml`` + cases) or from one YAML/JSONL case file.

    ``tools`` and ``executor`` replace the suite's own registry and executor (a live MCP server's
    listing and the executor that forwards calls to it: ``--tools mcp:...``)."""
    root = Path(path)
    if root.is_dir():
        suite = _load_folder(root, registry, tools)
    elif root.is_file():
        suite = _load_file(root, registry, tools)
    else:
        raise SuiteError(f"{root}: suite file or folder not found")
    if executor is not None:
        suite.executor = executor
    return suite


def _load_folder(root: Path, registry_override: Path | None, tools: ToolRegistry | None = None) -> Suite:
    header_path = next((root / n for n in SUITE_FILE_NAMES if (root / n).is_file()), None)
    header = _read_mapping(header_path) if header_path else {}
    registry_dir = registry_override or (root / header.get("registry", "tools"))
    if tools is not None:
        registry = tools
    else:
        registry = ToolRegistry.from_dir(registry_dir) if registry_dir.is_dir() else ToolRegistry()
    case_files = [p for g in CASE_FILE_GLOBS for p in sorted(root.glob(g))]
    if not case_files:
        raise SuiteError(f"{root}: no cases found (expected cases.yaml, cases.jsonl or cases/*.yaml)")
    cases = [case for f in case_files for case in read_cases(f)]
    return _build(header, cases, registry, name_default=root.name, source=str(root))


def _load_file(path: Path, registry_override: Path | None, tools: ToolRegistry | None = None) -> Suite:
    header: dict[str, Any] = {}
    if path.suffix == ".jsonl":
        cases = read_cases(path)
    else:
        data = _read_mapping_or_list(path)
        if isinstance(data, dict):
            header = {k: v for k, v in data.items() if k != "cases"}
        cases = read_cases(path)
    registry_dir = registry_override or (path.parent / header["registry"] if "registry" in header else None)
    if tools is not None:
        registry = tools
    else:
        registry = ToolRegistry.from_dir(registry_dir) if registry_dir else ToolRegistry()
    return _build(header, cases, registry, name_default=path.stem, source=str(path))


def _build(
    header: dict[str, Any], cases: list[Case], registry: ToolRegistry, *, name_default: str, source: str
) -> Suite:
    name = str(header.get("name", name_default))
    _check_unique(cases, source)
    bindings = None
    executor = header.get("executor", "contract")
    if header.get("bindings") is not None:
        # The suite's own Python tools (suites/bindings.py), run by the python-bindings executor.
        base = Path(source) if Path(source).is_dir() else Path(source).parent
        where = str(next((base / n for n in SUITE_FILE_NAMES if (base / n).is_file()), source))
        if "executor" in header:
            raise SuiteError(f"{where}: give either executor or bindings, not both")
        state = header.get("state")
        bindings = load_bindings(
            str(header["bindings"]), str(state) if state else None, base, registry, where
        )
        executor = BINDINGS_EXECUTOR
    suite = Suite(
        name=name,
        cases=cases,
        registry=registry,
        executor=executor,
        bindings=bindings,
        scorers=list(header.get("scorers", DEFAULT_TIERS)),
        system_prompt=header.get("system_prompt", DEFAULT_SYSTEM_PROMPT),
        description=header.get("description", ""),
        version=str(header.get("version", "1")),
        source=source,
    )
    if header.get(TOOL_SOURCE_KEY) is not None:  # read now: a bad declaration stops the load
        suite.metadata[TOOL_SOURCE_DECLARATION] = _tool_source(header[TOOL_SOURCE_KEY], source)
    _check_tools_known(suite)
    return suite


def _tool_source(value: Any, source: str) -> Any:
    """The suite's ``tool_source`` mapping (a :class:`~callbench.mcp.isolation.ToolSourceDeclaration`):
    the isolation its cases need from a live MCP server (``--tools mcp:...``) and the reset hook of one
    callbench cannot start per case."""
    from callbench.mcp.isolation import ToolSourceDeclaration  # the MCP client: only when declared

    base = Path(source)
    header = next((base / n for n in SUITE_FILE_NAMES if (base / n).is_file()), base)
    try:
        return ToolSourceDeclaration.parse(value, f"{header if base.is_dir() else base}: tool_source")
    except ConfigError as exc:
        raise SuiteError(str(exc)) from None


def read_cases(path: Path) -> list[Case]:
    """Read the cases of one YAML or JSONL file; errors name the file, the line and the case id."""
    if path.suffix == ".jsonl":
        return _read_jsonl_cases(path)
    return _read_yaml_cases(path)


def _read_jsonl_cases(path: Path) -> list[Case]:
    cases = []
    for lineno, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SuiteError(f"{path}:{lineno}: not valid JSON: {exc.msg}") from None
        cases.append(_case_from(data, f"{path}:{lineno}"))
    return cases


def _read_yaml_cases(path: Path) -> list[Case]:
    text = _read_text(path)
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise SuiteError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    items, item_nodes = data, node
    if isinstance(data, dict):
        if "cases" not in data:
            raise SuiteError(f"{path}: a case file must be a list of cases or a mapping with 'cases'")
        items = data["cases"]
        item_nodes = next(v for k, v in node.value if k.value == "cases") if node is not None else None
    if not isinstance(items, list):
        raise SuiteError(f"{path}: 'cases' must be a list")
    if item_nodes is None:
        raise SuiteError(f"{path}: empty case file")
    return [
        _case_from(item, f"{path}:{n.start_mark.line + 1}")
        for item, n in zip(items, item_nodes.value, strict=False)
    ]


def _case_from(data: Any, where: str) -> Case:
    if not isinstance(data, dict):
        raise SuiteError(f"{where}: a case must be a mapping, got {type(data).__name__}")
    label = f"case {data.get('id')!r}" if "id" in data else "case without 'id'"
    try:
        case = Case.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        message = err["msg"].removeprefix("Value error, ")
        raise SuiteError(f"{where}: {label}: {field + ': ' if field else ''}{message}") from None
    case.set_origin(where)  # load-time checks against the registry name the file and line
    return case


def _check_unique(cases: list[Case], source: str) -> None:
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise SuiteError(f"{source}: duplicate case id {case.id!r}")
        seen.add(case.id)


def _check_tools_known(suite: Suite) -> None:
    for case in suite.cases:
        registry = suite.registry_for(case)
        for name in case.tool_names():
            if name not in registry:
                raise SuiteError(f"{suite.source}: case {case.id!r}: tool {name!r} is not in the registry")
        for step in case.expected:
            for tool in step.tools:
                if tool not in registry:
                    raise SuiteError(
                        f"{suite.source}: case {case.id!r}: step {step.id!r}: unknown tool {tool!r}"
                    )


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: cannot read: {exc}") from None


def _read_mapping_or_list(path: Path) -> Any:
    try:
        return yaml.safe_load(_read_text(path))
    except yaml.YAMLError as exc:
        raise SuiteError(f"{path}: not valid YAML: {exc}") from None


def _read_mapping(path: Path) -> dict[str, Any]:
    data = _read_mapping_or_list(path)
    if not isinstance(data, dict):
        raise SuiteError(f"{path}: expected a mapping")
    return data
