"""Run observers: progress displays, live watchers and tests subscribe to engine events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from callbench.secrets import has_secrets, scrub_model

if TYPE_CHECKING:
    from callbench.types.case import Case
    from callbench.types.records import CaseRecord, RunHeader
    from callbench.types.trace import RoundInfo, TraceCall


@runtime_checkable
class RunObserver(Protocol):
    """Receives engine events. Every method is optional; implement what you need."""

    def on_run_start(self, header: RunHeader, total: int) -> None: ...
    def on_case_start(self, case: Case, trial: int, offered: list[str]) -> None: ...
    def on_round(self, case: Case, round_info: RoundInfo, calls: list[TraceCall]) -> None: ...
    def on_case_end(self, record: CaseRecord) -> None: ...
    def on_run_end(self, summary: dict[str, Any]) -> None: ...


class Observers:
    """Fan-out to several observers; an observer missing a method is skipped for that event."""

    def __init__(self, observers: list[Any] | tuple[Any, ...] = ()) -> None:
        self.observers = list(observers)

    def emit_round(self, case: Case, round_info: RoundInfo, calls: list[TraceCall]) -> None:
        """``on_round`` with every known secret blanked in the round and its calls first: a tool
        result, an agent's text or a server message may hold a key, and watchers print them."""
        if has_secrets():
            round_info = scrub_model(round_info)
            calls = [scrub_model(call) for call in calls]
        self.emit("on_round", case, round_info, calls)

    def emit(self, event: str, *args: Any) -> None:
        for observer in self.observers:
            method = getattr(observer, event, None)
            if method is not None:
                method(*args)
