"""Import the CodeXomics benchmark (its suites dumped to JSON and its YAML tool contracts).

``import_codexomics`` converts the original app's "Automatic Simple"/"Automatic Complex" suites
and ``tools_registry`` folder into callbench cases and contracts, and returns every problem it
met (per case or per file) instead of raising. ``write_suite`` writes the result as a suite
folder that ``callbench run --suite <folder>`` runs. The mapping is documented in
``docs/codexomics-import.md``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from callbench.benchmarks.codexomics.aliases import alias_case
from callbench.benchmarks.codexomics.cases import CaseContext, CaseOptions, convert_case
from callbench.benchmarks.codexomics.contracts import annotate, contract_mapping, load_registry_dir
from callbench.benchmarks.codexomics.finish import add_missing_keys, finish_case
from callbench.benchmarks.codexomics.reconcile import reconcile_case
from callbench.benchmarks.codexomics.returns import result_schema_from_returns
from callbench.benchmarks.codexomics.rules import ImportProblem
from callbench.plugin import Case, Suite, SuiteOptions, ToolContract, UserError
from callbench.tools.schema import check_schema

SYSTEM_PROMPT = (
    "You operate a genome-browser workbench through the supplied tools. Use only those tools and "
    "call them rather than describing calls. Take every argument from the request, from the context "
    "below or from earlier tool results; do not make values up. Context: the genome file ECOLI.gbk is "
    "loaded, the active chromosome is U00096 and the current view is U00096:100000-101000."
)


@dataclass
class ImportResult:
    """Everything one import produced."""

    cases: list[dict[str, Any]] = field(default_factory=list)
    """Case mappings in the callbench case format, in input order."""
    contracts: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Tool name -> contract mapping (``ToolContract`` fields)."""
    problems: list[ImportProblem] = field(default_factory=list)
    suites: dict[str, dict[str, Any]] = field(default_factory=dict)
    """suite_id -> {file, declared, imported, source}."""

    def count(self, severity: str) -> int:
        """Number of problems of one severity."""
        return sum(1 for p in self.problems if p.severity == severity)


VOCABULARY = {"file_types": ["fasta", "fa", "gb", "gbk", "gff", "bed", "vcf", "bam", "wig"]}
"""The domain's file types, declared for the built-in agents (the baseline extracts file names with them)."""


def import_codexomics(
    suite_files: Sequence[str | Path], registry_dir: str | Path, *, options: CaseOptions | None = None
) -> ImportResult:
    """Convert CodeXomics suites and contracts; problems are collected, never raised.

    Args:
        suite_files: JSON dumps of the suites (``{suite_id, cases: [...]}`` or a bare list).
        registry_dir: The app's ``tools_registry`` folder (one YAML contract per tool).
        options: Conversion choices (e.g. ``resolve_refs``).

    Raises:
        UserError: Only when the registry folder itself does not exist.
    """
    options = options or CaseOptions()
    registry = Path(registry_dir)
    if not registry.is_dir():
        raise UserError(f"{registry}: CodeXomics tools_registry folder not found")
    result = ImportResult()
    result.contracts = _load_contracts(registry, result.problems)
    ctx = CaseContext(
        properties={n: list(c["parameters"].get("properties", {})) for n, c in result.contracts.items()},
        result_fields={
            n: set((c.get("result_schema") or {}).get("properties", {})) for n, c in result.contracts.items()
        },
    )
    for path in suite_files:
        _import_suite_file(Path(path), ctx, options, result)
    add_missing_keys(result.contracts, ctx, result.problems)
    _validate_contracts(result)
    annotate(result.contracts)
    for case in result.cases:
        if all(tool in result.contracts for tool in _case_tools(case)):
            finish_case(case, result.contracts, result.problems)
            reconcile_case(case, result.contracts, result.problems)
            alias_case(case, result.contracts, result.problems)
    _validate_contracts(result)
    _validate_cases(result)
    for case in result.cases:
        case.setdefault("metadata", {})["vocabulary"] = VOCABULARY
    return result


def _case_tools(case: dict[str, Any]) -> list[str]:
    return [t for s in case["expected"] for t in ([s["tool"]] if isinstance(s["tool"], str) else s["tool"])]


def _load_contracts(registry: Path, problems: list[ImportProblem]) -> dict[str, dict[str, Any]]:
    contracts: dict[str, dict[str, Any]] = {}
    for name, raw in load_registry_dir(registry, problems).items():
        mapping = contract_mapping(raw, problems)
        schema = result_schema_from_returns(raw.data.get("returns"))
        if schema:
            mapping["result_schema"] = schema
        contracts[name] = mapping
    return contracts


def _import_suite_file(path: Path, ctx: CaseContext, options: CaseOptions, result: ImportResult) -> None:
    where = path.name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        result.problems.append(ImportProblem(where, "error", f"cannot read suite JSON: {exc}; file skipped"))
        return
    wrapper = data if isinstance(data, dict) else {}
    raw_cases = wrapper.get("cases") if isinstance(data, dict) else data
    if not isinstance(raw_cases, list):
        result.problems.append(ImportProblem(where, "error", "no 'cases' list; file skipped"))
        return
    suite_id = str(wrapper.get("suite_id") or path.stem)
    if suite_id in result.suites:
        result.problems.append(ImportProblem(where, "error", f"suite {suite_id!r} given twice; file skipped"))
        return
    declared = wrapper.get("case_count")
    if isinstance(declared, int) and declared != len(raw_cases):
        result.problems.append(
            ImportProblem(where, "warning", f"declares {declared} cases but holds {len(raw_cases)}")
        )
    before = len(result.cases)
    seen: set[str] = set()
    for raw in raw_cases:
        case = convert_case(raw, suite_id, ctx, options, result.problems)
        if case is None:
            continue
        if case["id"] in seen:
            result.problems.append(
                ImportProblem(case["id"], "error", "duplicate case id; later copy skipped")
            )
            continue
        seen.add(case["id"])
        result.cases.append(case)
    result.suites[suite_id] = {
        "file": path.name,
        "declared": declared,
        "found": len(raw_cases),
        "imported": len(result.cases) - before,
        "source": wrapper.get("source"),
    }


def _validate_contracts(result: ImportResult) -> None:
    """Check contracts against callbench's model and JSON Schema; drop (and report) what fails."""
    for name in list(result.contracts):
        mapping = result.contracts[name]
        where = mapping["metadata"].get("source_file", name)
        problem = check_schema(mapping["parameters"])
        try:
            ToolContract.model_validate(mapping)
        except ValidationError as exc:
            problem = problem or exc.errors()[0]["msg"]
        if problem:
            result.problems.append(
                ImportProblem(where, "error", f"contract invalid after conversion: {problem}")
            )
            del result.contracts[name]


def _validate_cases(result: ImportResult) -> None:
    """Check cases against callbench's ``Case`` model; drop (and report) what fails."""
    kept = []
    for case in result.cases:
        missing = [t for t in _case_tools(case) if t not in result.contracts]
        try:
            if missing:
                raise ValueError(f"tool(s) {', '.join(sorted(set(missing)))} have no valid contract")
            Case.model_validate(case)
        except (ValidationError, ValueError) as exc:
            message = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            result.problems.append(
                ImportProblem(case["id"], "error", f"case invalid after conversion: {message}")
            )
            continue
        kept.append(case)
    result.cases = kept


SUITE_FILES = {
    "simple": ("automatic_simple.json",),
    "complex": ("automatic_complex.json",),
    "all": ("automatic_simple.json", "automatic_complex.json"),
}


def load_suite(spec: str, options: SuiteOptions) -> Suite:
    """Catalog factory: ``--suite codexomics[:simple|complex|all] --data DIR`` imports on the fly.

    ``DIR`` (or ``$CALLBENCH_CODEXOMICS_DATA``) holds the app's suite dumps and ``tools_registry/``;
    ``--registry`` overrides the contracts folder. Import problems are kept in
    ``suite.metadata["import_problems"]``; run ``callbench import codexomics`` to see them.
    """
    import os

    from callbench.plugin import ToolRegistry

    which = spec or "all"
    if which not in SUITE_FILES:
        raise UserError(f"codexomics suite {which!r}: choose one of {', '.join(SUITE_FILES)}")
    data = options.data or (
        Path(os.environ["CALLBENCH_CODEXOMICS_DATA"]) if os.environ.get("CALLBENCH_CODEXOMICS_DATA") else None
    )
    if data is None:
        raise UserError(
            "the codexomics suite needs --data DIR: a folder with the app's automatic_simple.json, "
            "automatic_complex.json and tools_registry/ (not shipped with callbench)"
        )
    files = [Path(data) / name for name in SUITE_FILES[which]]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise UserError(f"codexomics suite: missing {', '.join(missing)}")
    resolve = bool(options.extra.get("resolve_refs", False))
    result = import_codexomics(
        files, options.registry or Path(data) / "tools_registry", options=CaseOptions(resolve_refs=resolve)
    )
    registry = ToolRegistry(
        [ToolContract.model_validate(c) for c in result.contracts.values()],
        source=str(options.registry or Path(data) / "tools_registry"),
    )
    return Suite(
        name="codexomics" if which == "all" else f"codexomics-{which}",
        cases=[Case.model_validate(c) for c in result.cases],
        registry=registry,
        executor="contract",
        system_prompt=SYSTEM_PROMPT,
        description="CodeXomics automatic suites, imported from the app's files.",
        source=str(data),
        metadata={"import_problems": [p.line() for p in result.problems], "codexomics": result.suites},
    )
