"""Write the genomics tool contracts (one YAML file per tool) from the @tool declarations.

    python scripts/make_genomics_registry.py          # rewrites src/callbench/benchmarks/genomics/registry/

The tests regenerate the contracts in memory and fail when a checked-in file differs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from callbench.benchmarks.genomics.bindings import SPECS
from callbench.benchmarks.genomics.registry_io import contract_yaml

OUT = Path(__file__).resolve().parent.parent / "src" / "callbench" / "benchmarks" / "genomics" / "registry"


def main() -> None:
    """Regenerate every contract file."""
    if OUT.exists():
        shutil.rmtree(OUT)
    for spec in SPECS.values():
        path = OUT / spec.category / f"{spec.name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(contract_yaml(spec), encoding="utf-8")
    print(f"wrote {len(SPECS)} contracts in {len({s.category for s in SPECS.values()})} categories")


if __name__ == "__main__":
    main()
