"""Settings and verdict type shared by the BFCL checker modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Language = Literal["python", "java", "javascript"]
Mode = Literal["faithful", "improved"]


IMPROVED_SWITCHES: tuple[str, ...] = (
    "assignment_matching",
    "numeric_strings",
    "int_valued_floats",
    "java_array_quotes",
    "java_any_elements",
    "empty_answer_lists",
    "undocumented_answer_params",
    "renamed_answer_params",
    "required_answer_values",
    "json_whole_answer",
)
"""Improved-mode switches, each on by default and each can be turned off on its own."""


@dataclass(frozen=True)
class BfclOptions:
    """How the BFCL checker judges an entry.

    ``faithful`` reproduces bfcl-eval's AST checker verdict for verdict.  ``improved`` turns on
    the switches below (each can be turned off on its own); improved figures are recorded
    with these settings and are never pooled with faithful ones.  Entries each answer-key
    switch touches are listed in docs/bfcl.md.

    Attributes:
        mode: ``faithful`` or ``improved``.
        underscore_to_dot: Expect ``.`` in function names to arrive as ``_`` (BFCL does this for
            models whose BFCL config says so, e.g. OpenAI-style FC models).
        assignment_matching: Match parallel calls by a perfect bipartite assignment instead of
            BFCL's greedy first fit (no false negatives from order).
        numeric_strings: Accept ``"5"``/``"2.5"`` for Python integer/float params.
        int_valued_floats: Accept an int-valued float for an integer param: ``5.0`` in Python,
            the literal ``"5.0"`` in Java and JavaScript.
        java_array_quotes: Read ``String``/``char`` elements of Java arrays and ArrayLists as Java
            does: a quoted literal is its text, an unquoted word is a variable (not that text).
        java_any_elements: Read elements of a Java collection of ``any`` as typed literals
            (``42``, ``true``, ``"id"``) and accept any element type.
        empty_answer_lists: An array parameter whose acceptable-value list is empty accepts ``[]``.
        undocumented_answer_params: Answer parameters the function doc does not define are dropped.
        renamed_answer_params: An answer parameter absent from the doc is renamed to the one
            required doc parameter the answer lacks.
        required_answer_values: ``""`` (may be omitted) does not count as a value of a parameter
            the doc requires; an entry left without a value gets the one its question states.
        json_whole_answer: Format sensitivity, JSON return format: read the answer's call list as
            one JSON value (BFCL's reader cuts it at the first ``}]``, the end of a list of objects
            inside the arguments, so such an answer never decodes).
    """

    mode: Mode = "faithful"
    underscore_to_dot: bool = False
    assignment_matching: bool = True
    numeric_strings: bool = True
    int_valued_floats: bool = True
    java_array_quotes: bool = True
    java_any_elements: bool = True
    empty_answer_lists: bool = True
    undocumented_answer_params: bool = True
    renamed_answer_params: bool = True
    required_answer_values: bool = True
    json_whole_answer: bool = True

    @property
    def improved(self) -> bool:
        """True when improved-mode switches apply."""
        return self.mode == "improved"

    def on(self, switch: str) -> bool:
        """Whether an improved-mode switch applies (always False in faithful mode)."""
        return self.improved and bool(getattr(self, switch))

    def describe(self) -> dict[str, Any]:
        """Settings as recorded in run headers and records."""
        out: dict[str, Any] = {"mode": self.mode, "underscore_to_dot": self.underscore_to_dot}
        if self.improved:
            out.update({switch: getattr(self, switch) for switch in IMPROVED_SWITCHES})
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
