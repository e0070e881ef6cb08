"""``set_fields`` writes what attribute assignment writes, and refuses what it cannot do the same way."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from callbench.types.fields import set_fields
from callbench.types.trace import RoundInfo


def test_fields_set_and_serialised_as_by_assignment() -> None:
    by_fields = RoundInfo(index=1, started_at=0.0)
    by_assignment = RoundInfo(index=1, started_at=0.0)
    # ``model`` is a field of RoundInfo: the helper's own parameter must not take it
    set_fields(by_fields, text="hi", reasoning="because", call_ids=["c1"], model="m")
    by_assignment.text, by_assignment.reasoning, by_assignment.call_ids = "hi", "because", ["c1"]
    by_assignment.model = "m"
    assert by_fields == by_assignment
    assert by_fields.model_fields_set == by_assignment.model_fields_set
    assert by_fields.model_dump_json(exclude_unset=True) == by_assignment.model_dump_json(exclude_unset=True)
    assert by_fields.model_dump_json() == by_assignment.model_dump_json()


def test_an_unknown_field_or_a_validating_model_is_refused() -> None:
    with pytest.raises(TypeError, match=r"not plain fields: \['txet'\]"):
        set_fields(RoundInfo(index=1, started_at=0.0), txet="typo")

    class Checked(BaseModel):
        model_config = ConfigDict(validate_assignment=True)
        n: int = 0

    with pytest.raises(TypeError, match="validate_assignment"):
        set_fields(Checked(), n=2)
