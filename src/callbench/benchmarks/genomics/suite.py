"""Suite loaders of the genomics pack: ``genomics-simple``, ``genomics-complex``, ``genomics`` and
``genomics-manual`` (manual cases, scored by reviewers; not part of ``genomics``).

Every suite runs on the python executor bound to the real tool implementations, with a fresh
:class:`Workspace` per case (in the case's temporary folder), and is scored by the three strict
tiers plus the diagnostic ``state-match``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from callbench.benchmarks.genomics.bindings import BINDINGS
from callbench.benchmarks.genomics.registry_io import load_registry
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.plugin import DEFAULT_TIERS, Case, PythonExecutor, Suite, SuiteError, SuiteOptions, read_cases

SUITE_DIR = Path(__file__).resolve().parent / "suites"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SCORERS = [*DEFAULT_TIERS, "state-match"]
SYSTEM_PROMPT = (
    "You operate a genome workbench through the supplied tools. Use only those tools and call them instead "
    "of describing calls. Ground every argument in the user's request, the fixture context below, or the "
    "results of earlier tool calls; never invent values. Coordinates are 1-based and inclusive.\n"
    "Fixture context: the synthetic genome data/syn_genome.gbk is loaded (organism 'Synthetic bacterium "
    "callbench'); chromosomes SYN01 (120,000 bp, the current chromosome) and plasmid pSYN1 (6,000 bp); the "
    "current view is SYN01:35001-36000; visible tracks: genes, gc_content, sequence. The working directory "
    "is the session folder; bundled files are in data/ (syn_genome.gbk, syn_genome.fasta, reads.sam, "
    "variants.vcf, sample.wig, another_sample.wig, crispr_guides.bed, extra_annotations.gff3, operons.tsv, "
    "README.md). Edits to the sequence are queued until execute_actions runs them. When the request is "
    "complete, reply with a short final answer."
)


def workspace_factory(case: Case, workdir: Path) -> Workspace:
    """A fresh workspace in the case's temporary folder (the python executor's state factory)."""
    return Workspace(workdir)


def make_executor() -> PythonExecutor:
    """The python executor bound to the genomics implementations."""
    return PythonExecutor(BINDINGS, state_factory=workspace_factory)


@lru_cache(maxsize=4)
def _cached_cases(name: str) -> tuple[Case, ...]:
    path = SUITE_DIR / f"{name}.yaml"
    if not path.is_file():
        raise SuiteError(f"{name}: bundled case file is missing from the package")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
        return tuple(Case.model_validate(item) for item in data["cases"])
    except Exception:  # noqa: BLE001 - re-read slowly for an error message with file and line
        return tuple(read_cases(path))


def read_suite_cases(name: str) -> list[Case]:
    """Fresh copies of the cases of ``suites/<name>.yaml`` (errors name the file and line)."""
    return [case.model_copy(deep=True) for case in _cached_cases(name)]


VOCABULARY = {"file_types": ["fasta", "fa", "gb", "gbk", "gff", "bed", "vcf", "bam", "wig"]}
"""The pack's file types, declared for the built-in agents (the baseline extracts file names with them)."""


def _suite(name: str, cases: list[Case], description: str) -> Suite:
    registry = load_registry()
    for case in cases:
        case.metadata["vocabulary"] = VOCABULARY
        for step in case.expected:
            unknown = [t for t in step.tools if t not in registry]
            if unknown:
                raise SuiteError(f"{name}: case {case.id!r}: unknown tool(s) {unknown}")
    return Suite(
        name=name,
        cases=cases,
        registry=registry,
        executor=make_executor(),
        scorers=list(SCORERS),
        system_prompt=SYSTEM_PROMPT,
        description=description,
        version="1",
        source="callbench.benchmarks.genomics",
        metadata={"domain": "genomics", "tools": len(registry)},
    )


def _reject_spec(name: str, spec: str) -> None:
    if spec:
        raise SuiteError(f"suite {name!r} takes no options (got {spec!r})")


def load_simple(spec: str = "", options: SuiteOptions | None = None) -> Suite:
    """The single-call genomics suite."""
    _reject_spec("genomics-simple", spec)
    return _suite(
        "genomics-simple",
        read_suite_cases("genomics-simple"),
        "Single genome-workbench operations: one expected call each.",
    )


def load_complex(spec: str = "", options: SuiteOptions | None = None) -> Suite:
    """The multi-step genomics workflows."""
    _reject_spec("genomics-complex", spec)
    return _suite(
        "genomics-complex",
        read_suite_cases("genomics-complex"),
        "Multi-step genome-workbench workflows (2-9 steps) with references between steps.",
    )


def load_manual(spec: str = "", options: SuiteOptions | None = None) -> Suite:
    """Open-ended analysis requests scored by reviewers against each case's rubric (``scoring: manual``)."""
    _reject_spec("genomics-manual", spec)
    return _suite(
        "genomics-manual",
        read_suite_cases("genomics-manual"),
        "Open-ended genome analyses scored by reviewers against a rubric (manual cases; out of every "
        "automatic rate).",
    )


def load_all(spec: str = "", options: SuiteOptions | None = None) -> Suite:
    """Both suites as one (case ids are prefixed ``simple/`` and ``complex/``)."""
    _reject_spec("genomics", spec)
    cases: list[Any] = []
    for part in ("simple", "complex"):
        for case in read_suite_cases(f"genomics-{part}"):
            cases.append(case.model_copy(update={"id": f"{part}/{case.id}", "suite": ""}))
    return _suite("genomics", cases, "The whole genomics pack: simple operations and complex workflows.")
