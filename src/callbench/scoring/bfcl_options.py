"""Settings and verdict type shared by the BFCL checker modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Language = Literal["python", "java", "javascript"]
Mode = Literal["faithful", "improved"]


@dataclass(frozen=True)
class BfclOptions:
    """How the BFCL checker judges an entry.

    ``faithful`` reproduces bfcl-eval's AST checker verdict for verdict.  ``improved`` turns on
    the leniencies below (each can be switched off on its own); improved figures are recorded
    with these settings and are never pooled with faithful ones.

    Attributes:
        mode: ``faithful`` or ``improved``.
        underscore_to_dot: Expect ``.`` in function names to arrive as ``_`` (BFCL does this for
            providers whose tool names may not contain dots, e.g. OpenAI-style FC models).
        assignment_matching: Improved mode: match parallel calls by a perfect bipartite
            assignment instead of BFCL's greedy first fit (no false negatives from order).
        numeric_strings: Improved mode: accept ``"5"``/``"2.5"`` for integer/float params.
        int_valued_floats: Improved mode: accept ``5.0`` for an integer param.
    """

    mode: Mode = "faithful"
    underscore_to_dot: bool = False
    assignment_matching: bool = True
    numeric_strings: bool = True
    int_valued_floats: bool = True

    @property
    def improved(self) -> bool:
        """True when improved-mode leniencies apply."""
        return self.mode == "improved"

    def describe(self) -> dict[str, Any]:
        """Settings as recorded in run headers and records."""
        out: dict[str, Any] = {"mode": self.mode, "underscore_to_dot": self.underscore_to_dot}
        if self.improved:
            out.update(
                assignment_matching=self.assignment_matching,
                numeric_strings=self.numeric_strings,
                int_valued_floats=self.int_valued_floats,
            )
        return out


@dataclass
class Check:
    """Outcome of one BFCL check (an entry, a call or a parameter).

    Attributes:
        valid: Whether the check passed.
        error_type: BFCL's ``error_type`` name when it failed (``""`` when valid).
        errors: Human-readable messages.
    """

    valid: bool
    error_type: str = ""
    errors: list[Any] = field(default_factory=list)

    @classmethod
    def ok(cls) -> Check:
        """A passing check (a shared instance: passing checks are never modified)."""
        return _PASS

    @classmethod
    def fail(cls, error_type: str, message: Any) -> Check:
        """A failing check with one message."""
        return cls(False, error_type, [message])


_PASS = Check(True)
