"""Immutable JSON-like values: what state snapshots are made of.

A snapshot must not change after it is taken: the gold replay keeps the initial state while the
same session goes on mutating its workspace, and the state-match scorer caches gold states across
cases. :func:`freeze` deep-copies a JSON-like value into dict and list subclasses that refuse every
mutation, so a snapshot can neither follow the live state nor be edited by a scorer. They still
compare equal to plain dicts and lists (a snapshot read back from ``records.jsonl`` is plain JSON)
and serialise as ordinary JSON.
"""

from __future__ import annotations

from typing import Any, NoReturn


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"{type(self).__name__} is immutable: state snapshots cannot be changed")


class FrozenDict(dict):
    """A ``dict`` that refuses mutation; equal to a plain dict with the same items."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self


class FrozenList(list):
    """A ``list`` that refuses mutation; equal to a plain list with the same items."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = remove = pop = clear = sort = reverse = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenList:
        return self


def freeze(value: Any) -> Any:
    """A deep, immutable copy of a JSON-like value (dicts, lists and tuples become frozen)."""
    if isinstance(value, dict):
        return FrozenDict({str(k) if not isinstance(k, str) else k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return FrozenList(freeze(v) for v in value)
    return value
