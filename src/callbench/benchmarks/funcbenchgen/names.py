"""Random unique names, in the official formats.

Variable names are 3-6 random lowercase letters; function, type and subtype names are a prefix
plus ``_`` and 3 letters. One pool of used names covers all of them, as in the official code.
"""

from __future__ import annotations

import random
import string

from callbench.plugin import ConfigError

_LETTERS = string.ascii_lowercase
_MAX_TRIES = 10_000


class NameSource:
    """Draws names that were never drawn before from this source."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def sharing(self, rng: random.Random) -> NameSource:
        """A source drawing from ``rng`` that shares this source's pool of used names."""
        other = NameSource(rng)
        other.used = self.used
        return other

    def draw(self, prefix: str = "") -> str:
        """A fresh name: ``prefix_abc`` with a prefix, else 3-6 lowercase letters."""
        for _ in range(_MAX_TRIES):
            if prefix:
                name = prefix + "_" + "".join(self.rng.choices(_LETTERS, k=3))
            else:
                name = "".join(self.rng.choices(_LETTERS, k=self.rng.randint(3, 6)))
            if name not in self.used:
                self.used.add(name)
                return name
        raise ConfigError(f"ran out of unique {prefix or 'variable'} names; use fewer functions")
