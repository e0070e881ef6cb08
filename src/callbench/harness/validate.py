"""Check one emitted call against the offered contracts: known tool, parsable, schema-valid."""

from __future__ import annotations

from collections.abc import Mapping

from callbench.tools.registry import ToolRegistry
from callbench.tools.schema import validate_arguments, validator_for
from callbench.types.contract import ToolContract
from callbench.types.trace import Trace, TraceCall


def check_call(call: TraceCall, offered: Mapping[str, ToolContract]) -> None:
    """Fill ``known_tool``, ``schema_valid`` and ``schema_errors`` of ``call`` in place."""
    contract = offered.get(call.tool)
    call.known_tool = contract is not None
    if contract is None:
        call.schema_valid = False
        call.schema_errors = [f"Unknown tool: {call.tool}"]
    elif call.arguments is None:
        call.schema_valid = False
        call.schema_errors = [f"arguments are not a JSON object: {call.parse_error or 'unparsable'}"]
    else:
        call.schema_errors = validate_arguments(
            contract.provider_schema(),
            call.arguments,
            contract.memo("validator", lambda c: validator_for(c.provider_schema())),
        )
        call.schema_valid = not call.schema_errors


def revalidate(trace: Trace, registry: ToolRegistry) -> Trace:
    """Recompute every call's schema verdict against ``registry`` (used for imported traces)."""
    offered = {c.name: c for c in registry}
    for call in trace.calls:
        check_call(call, offered)
    return trace
