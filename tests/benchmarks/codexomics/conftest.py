"""Fixtures for the CodeXomics importer tests.

The conformance data (the original app's suites and contracts) is not part of the package. The
tests look for it in ``$CALLBENCH_CODEXOMICS_DATA`` or next to the repository at
``../shared/data/codexomics`` and skip the conformance tests with a clear reason when absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def data_dir() -> Path | None:
    """The CodeXomics data folder, or None when it is not available."""
    env = os.environ.get("CALLBENCH_CODEXOMICS_DATA")
    candidate = Path(env) if env else REPO.parent / "shared" / "data" / "codexomics"
    return candidate if (candidate / "automatic_simple.json").is_file() else None


@pytest.fixture(scope="session")
def cx_data() -> Path:
    found = data_dir()
    if found is None and os.environ.get("CI"):
        pytest.fail("CodeXomics data missing in CI: expected ../shared/data/codexomics beside the clone")
    if found is None:
        pytest.skip(
            "CodeXomics data not found: set CALLBENCH_CODEXOMICS_DATA "
            "or place it at ../shared/data/codexomics"
        )
    return found


@pytest.fixture(scope="session")
def imported(cx_data: Path):
    from callbench.benchmarks.codexomics.suite import import_codexomics

    return import_codexomics(
        [cx_data / "automatic_simple.json", cx_data / "automatic_complex.json"], cx_data / "tools_registry"
    )


@pytest.fixture(scope="session")
def suite_dir(imported, tmp_path_factory) -> Path:
    from callbench.benchmarks.codexomics.write import write_suite

    return write_suite(imported, tmp_path_factory.mktemp("codexomics") / "suite")


@pytest.fixture(scope="session")
def suite(suite_dir: Path):
    from callbench.suites.loader import load_suite_path

    return load_suite_path(suite_dir)


MINI_TOOLS = {
    "navigation/navigate_to_position.yaml": """name: navigate_to_position
description: Navigate to coordinates.
category: navigation
parameters:
  type: object
  properties:
    chromosome: {type: string}
    start: {type: number, minimum: 1}
    end: {type: number, minimum: 1}
    position: {type: number}
  required: [chromosome]
  anyOf:
    - required: [start, end]
    - required: [position]
""",
    "navigation/toggle_track.yaml": """name: toggle_track
parameters:
  type: object
  properties:
    track_name: {type: string, enum: [genes, gc, gc_content, variants]}
    visible: {type: boolean}
  required: [track_name]
""",
    "navigation/get_track_status.yaml": (
        "name: get_track_status\nparameters: {type: object, properties: {}}\n"
    ),
    "navigation/close_tab.yaml": """name: close_tab
parameters:
  anyOf: [{required: [tab_id]}, {required: [tab_index]}]
  properties:
    tab_id: {type: string}
    tab_index: {type: integer, minimum: 0}
""",
    "navigation/open_new_tab.yaml": (
        "name: open_new_tab\nparameters: {type: object, properties: {}}\nreturns:\n  tab_id: 'string - id'\n"
    ),
    "navigation/switch_to_tab.yaml": """name: switch_to_tab
parameters:
  type: object
  properties:
    tab_id: {type: string, required: true}
""",
    "sequence/digest.yaml": (
        "name: 'digest'\ndescription: 'cuts 5\\' ends'\n"
        "parameters:\n  properties:\n    enzymes: {type: array}\n"
    ),
    "export/export_fasta.yaml": """name: export_fasta
parameters:
  type: object
  properties:
    filePath: {type: string}
    format: {type: string, enum: [standard, wrapped]}
""",
}

MINI_SIMPLE = {
    "suite_id": "mini_simple",
    "case_count": 4,
    "cases": [
        {
            "id": "nav_01",
            "category": "navigation",
            "instruction": "Go to 100-200.",
            "timeout": 15000,
            "expectedResult": {"tool_name": "navigate_to_position", "parameters": {"start": 100, "end": 200}},
        },
        {
            "id": "tab_01",
            "category": "ui",
            "instruction": "Open three tabs.",
            "expectedResult": {"tool_name": "open_new_tab", "parameters": {}, "expectedTabsIncrease": 3},
        },
        {
            "id": "export_01",
            "category": "export",
            "instruction": "Export FASTA to ./test_data/x.fa.",
            "assertCallOnly": True,
            "expectedResult": {
                "tool_name": "export_fasta",
                "parameters": {"filename": "./test_data/x.fa", "format": "fasta", "newKey": 3},
            },
        },
        {"id": "broken", "instruction": "No expected result."},
    ],
}

MINI_COMPLEX = [
    {
        "id": "nav_01",
        "category": "track_control",
        "instruction": "Check, show GC, hide variants, check.",
        "expectedResult": {
            "tool_sequence": ["get_track_status", "toggle_track", "toggle_track", "get_track_status"],
            "orderInsensitiveTools": ["toggle_track"],
            "parameters": [
                {},
                {"track_name": "gc_content", "visible": True},
                {"track_name": "variants", "visible": False},
                {},
            ],
        },
    },
    {
        "id": "tabs_02",
        "category": "ui",
        "instruction": "Open a tab, switch to it, close it.",
        "expectedResult": {
            "tool_sequence": ["open_new_tab", "switch_to_tab", "close_tab"],
            "parameters": [{}, {"tab_id": "{open_new_tab.tab_id}"}, {}],
        },
    },
    {
        "id": "alt_03",
        "category": "navigation",
        "instruction": "Digest then go somewhere.",
        "expectedResult": {
            "tool_sequence": ["digest", ["navigate_to_position", "no_such_tool"]],
            "parameters": [{"enzymes": ["EcoRI"]}, {}],
        },
    },
]


@pytest.fixture
def mini_data(tmp_path: Path) -> Path:
    """A tiny CodeXomics-shaped data folder exercising every marker and quirk."""
    import json

    for rel, text in MINI_TOOLS.items():
        path = tmp_path / "tools_registry" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "mini_simple.json").write_text(json.dumps(MINI_SIMPLE), encoding="utf-8")
    (tmp_path / "mini_complex.json").write_text(json.dumps(MINI_COMPLEX), encoding="utf-8")
    return tmp_path
