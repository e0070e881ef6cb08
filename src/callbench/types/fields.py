"""Setting several fields of a pydantic model at once, without its per-attribute ``__setattr__``.

pydantic's ``BaseModel.__setattr__`` runs Python code for every assignment (about a microsecond
each); the harness fills a round's dozen fields per request and slims every record it keeps, which
made those assignments a measurable share of the CPU per request (issue 26). The models passed here
do not validate assignment, so the plain write is what ``__setattr__`` would have done.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def set_fields(target: BaseModel, /, **values: Any) -> None:
    """Assign ``values`` to ``target``'s fields and mark them set (as attribute assignment does).
    ``target`` is positional-only: a field may be called ``model`` or ``target``.

    Raises:
        TypeError: ``target`` validates assignment or a name is not one of its fields (a typo would
            otherwise add an attribute no serialiser writes).
    """
    fields = type(target).model_fields
    if type(target).model_config.get("validate_assignment") or not fields.keys() >= values.keys():
        wrong = sorted(values.keys() - fields.keys()) or "validate_assignment"
        raise TypeError(f"set_fields on {type(target).__name__}: not plain fields: {wrong}")
    target.__dict__.update(values)
    target.__pydantic_fields_set__.update(values)
