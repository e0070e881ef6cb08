"""Helpers for user-facing name lookups."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice, or a list of a few choices."""
    options = sorted(set(choices))
    close = difflib.get_close_matches(name, options, n=3, cutoff=0.5)
    if close:
        return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"
    if options and len(options) <= 12:
        return " (available: " + ", ".join(options) + ")"
    return ""
