"""ToolContract keeps its strict schema (and validator) while its parameters stay the same object."""

from __future__ import annotations

from callbench.types.contract import ToolContract


def test_strict_schema_is_computed_once_and_follows_new_parameters() -> None:
    contract = ToolContract(name="t", parameters={"type": "object", "properties": {"a": {"type": "string"}}})
    first = contract.provider_schema()
    assert first["additionalProperties"] is False
    assert contract.provider_schema() is first
    other = contract.model_copy(
        update={"parameters": {"type": "object", "properties": {"b": {"type": "integer"}}}}
    )
    assert set(other.provider_schema()["properties"]) == {"b"}
    assert set(contract.provider_schema()["properties"]) == {"a"}
    loose = ToolContract(name="u", strict=False, parameters={"type": "object", "properties": {}})
    assert "additionalProperties" not in loose.provider_schema()
