"""The tool registry: a set of contracts loaded from a folder, validated, and hashed."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from callbench.errors import ContractError, UserError
from callbench.tools.schema import check_result_schema, check_schema, unknown_keywords
from callbench.types.contract import ToolContract
from callbench.types.hashing import sha256_of
from callbench.types.names import did_you_mean

CONTRACT_SUFFIXES = (".yaml", ".yml", ".json")


class ToolRegistry:
    """An immutable-by-convention collection of tool contracts keyed by name."""

    def __init__(self, contracts: Iterable[ToolContract] = (), *, source: str = "<memory>") -> None:
        self.source = source
        self._tools: dict[str, ToolContract] = {}
        self._hash: str | None = None
        self._equivalents: dict[str, dict[str, dict[str, str]]] | None = None
        for contract in contracts:
            self.add(contract)

    # -- building ------------------------------------------------------------------------------
    def add(self, contract: ToolContract, *, origin: str = "") -> None:
        """Add one contract; a duplicate name or a broken schema is a ``ContractError``."""
        where = origin or contract.name
        if contract.name in self._tools:
            raise ContractError(f"{where}: duplicate tool name {contract.name!r}")
        problem = check_schema(contract.parameters)
        if problem:
            raise ContractError(f"{where}: tool {contract.name!r}: {problem}")
        if contract.result_schema is not None:
            problem = check_result_schema(contract.result_schema)
            if problem:
                raise ContractError(f"{where}: tool {contract.name!r}: invalid result_schema: {problem}")
        self._tools[contract.name] = contract
        self._hash = None
        self._equivalents = None

    @classmethod
    def from_dir(cls, folder: str | Path) -> ToolRegistry:
        """Load every ``*.yaml``/``*.yml``/``*.json`` contract under ``folder`` (recursively, sorted)."""
        root = Path(folder)
        if not root.is_dir():
            raise ContractError(f"{root}: tool registry folder not found")
        registry = cls(source=str(root))
        for path in sorted(p for p in root.rglob("*") if p.suffix in CONTRACT_SUFFIXES and p.is_file()):
            registry.add(load_contract_file(path), origin=str(path))
        return registry

    # -- queries -------------------------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolContract]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> ToolContract:
        """The contract called ``name``; unknown names raise a ``UserError`` with a suggestion."""
        try:
            return self._tools[name]
        except KeyError:
            raise UserError(f"unknown tool {name!r}{did_you_mean(name, self._tools)}") from None

    def find(self, name: str) -> ToolContract | None:
        return self._tools.get(name)

    def equivalents(self, name: str) -> set[str]:
        """Names declared equivalent to ``name`` in either direction (excluding ``name``)."""
        return set(self._equivalence_table().get(name, {})) - {name}

    def key_map(self, expected: str, actual: str) -> dict[str, str]:
        """For a call of ``actual`` standing for an expected call of ``expected`` (a declared
        equivalent): expected argument key -> the actual tool's key. Empty when the keys agree."""
        return dict(self._equivalence_table().get(expected, {}).get(actual, {}))

    def _equivalence_table(self) -> dict[str, dict[str, dict[str, str]]]:
        # tool -> equivalent tool -> (this tool's key -> the other tool's key), in both directions.
        if self._equivalents is None:
            table: dict[str, dict[str, dict[str, str]]] = {}
            for tool in self._tools.values():
                for eq in tool.equivalences():
                    forward = table.setdefault(tool.name, {}).setdefault(eq.tool, {})
                    backward = table.setdefault(eq.tool, {}).setdefault(tool.name, {})
                    for mine, theirs in eq.keys.items():
                        if forward.get(mine, theirs) != theirs or backward.get(theirs, mine) != mine:
                            raise ContractError(
                                f"{tool.name}: equivalence with {eq.tool!r} maps {mine!r} "
                                "differently in the two contracts"
                            )
                        forward[mine], backward[theirs] = theirs, mine
            self._equivalents = table
        return self._equivalents

    def merged(self, contracts: Iterable[ToolContract]) -> ToolRegistry:
        """A new registry with these contracts added (inline contracts of a case)."""
        out = ToolRegistry(self._tools.values(), source=self.source)
        for contract in contracts:
            if contract.name in out and out.get(contract.name) == contract:
                continue
            out.add(contract)
        return out

    @property
    def hash(self) -> str:
        """SHA-256 of the canonical JSON of all contracts sorted by name."""
        if self._hash is None:
            payload = [self._tools[name].hash_payload() for name in sorted(self._tools)]
            self._hash = sha256_of(payload)
        return self._hash


def load_contract_file(path: Path) -> ToolContract:
    """Parse one contract file; every problem is a one-line ``ContractError`` naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
        data: Any = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise ContractError(f"{path}: cannot read: {exc}") from None
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ContractError(f"{path}: not valid {path.suffix[1:].upper()}: {first_line}") from None
    if not isinstance(data, dict):
        raise ContractError(
            f"{path}: a contract file must hold one mapping (a tool), got {type(data).__name__}"
        )
    for field in ("parameters", "result_schema"):
        unknown = unknown_keywords(data.get(field), field)
        if unknown:
            where, key = unknown[0]
            raise ContractError(
                f"{path}: field {where}: {key!r} is not a JSON Schema keyword (a typo, or in YAML an "
                "unquoted text holding ', ' or ': ' inside {...}: quote it)"
            )
    return contract_from_mapping(data, str(path))


def contract_from_mapping(data: dict[str, Any], where: str) -> ToolContract:
    """Build a contract from a mapping; validation problems name ``where`` and the field."""
    try:
        return ToolContract.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(root)"
        raise ContractError(f"{where}: field {field}: {err['msg']}") from None
