"""Serving faults and run limits in words: the summary's lines, and notes on one round for ``--watch``.

Shown apart from the accuracy figures, never folded into them: "3 answers look like calls the server
failed to parse" says the serving stack may be at fault where the tier table counts a miss.
"""

from __future__ import annotations

from callbench.report.terminal import percent
from callbench.scoring.serving import CONTEXT_OVERFLOW, FORMAT_ERROR_FINISH, TRUNCATED_FINISH
from callbench.types.summary import ServingFaults, Summary, TierFigures
from callbench.types.trace import RoundInfo


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def serving_lines(serving: ServingFaults | None) -> list[str]:
    """One line per kind of serving fault or run limit counted in a summary (none when clean)."""
    if serving is None:
        return []
    out = []
    if serving.text_call_answers:
        formats = ", ".join(f"{fmt} ×{n}" for fmt, n in sorted(serving.text_call_formats.items()))
        answers = _plural(serving.text_call_answers, "answer looks", "answers look")
        out.append(
            f"{answers} like calls the server failed to parse ({formats}; "
            f"{_plural(serving.text_call_cases, 'case', 'cases')}, QC flag serving_parse_suspected): "
            "scored as no call; --recover-text-calls scores them"
        )
    if serving.recovered_calls:
        out.append(
            f"{_plural(serving.recovered_calls, 'call', 'calls')} recovered from answer texts in "
            f"{_plural(serving.recovered_cases, 'case', 'cases')} and scored as calls (--recover-text-calls: "
            "a stratum of its own, never pooled with native runs)"
        )
    if serving.format_error_cases:
        out.append(
            f"{_plural(serving.format_error_cases, 'case has', 'cases have')} call-like text that could not "
            "be read (format_error; the raw text is on each round)"
        )
    if serving.output_truncated:
        out.append(
            f"{_plural(serving.output_truncated, 'case', 'cases')} cut at the output token limit "
            "(output_truncated)"
        )
    if serving.context_overflow:
        out.append(
            f"{_plural(serving.context_overflow, 'case', 'cases')} refused for the context window "
            "(context_overflow)"
        )
    return out


def summary_serving_lines(summary: Summary) -> list[str]:
    """:func:`serving_lines` of a summary, plus accuracy without the cases that met a run limit."""
    out = serving_lines(summary.serving)
    for name, figures in summary.tiers.items():
        note = limits_note(figures)
        if note:
            out.append(f"{name}: {note}")
    return out


def limits_note(figures: TierFigures) -> str:
    """``85.0% without 3 cases cut or overflowed`` for a tier that had such cases, else empty."""
    if not figures.n_serving_limited:
        return ""
    accuracy = figures.accuracy_without_serving_limits
    shown = "n/a" if accuracy is None else percent(accuracy)
    n = figures.n_serving_limited
    return (
        f"accuracy {shown} without the {_plural(n, 'case', 'cases')} cut at the output limit or over the "
        f"context window (plain accuracy counts {'it as a failure' if n == 1 else 'them as failures'})"
    )


def round_notes(info: RoundInfo) -> list[tuple[str, str]]:
    """(text, style) notes on one round for the live view: raw text, text calls, limits."""
    out: list[tuple[str, str]] = []
    if info.text_call_format:
        if info.recovered_calls:
            out.append(
                (
                    f"{_plural(info.recovered_calls, 'call', 'calls')} recovered from the text "
                    f"({info.text_call_format} serialisation)",
                    "yellow",
                )
            )
        else:
            out.append(
                (
                    f"the text holds a {info.text_call_format} tool call the server did not return as a "
                    "call (serving_parse_suspected)",
                    "bold yellow",
                )
            )
    if info.raw_text is not None and info.raw_text != info.text:
        out.append((f"raw text as received: {info.raw_text[:2000]}", "dim"))
    if info.finish_reason == FORMAT_ERROR_FINISH:
        out.append(("call-like text that could not be read (format_error)", "red"))
    elif info.finish_reason in TRUNCATED_FINISH:
        out.append((f"output cut at the token limit (finish_reason {info.finish_reason})", "red"))
    elif info.finish_reason == CONTEXT_OVERFLOW:
        out.append(("refused: the conversation exceeds the model's context window", "red"))
    return out
