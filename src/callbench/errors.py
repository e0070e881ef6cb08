"""One exception hierarchy for callbench.

Three families, handled differently by the harness:

* ``UserError`` and subclasses: bad input or configuration. The CLI prints the message on one
  line, without a traceback, and exits with status 2.
* ``ProviderError`` and subclasses: infrastructure failures talking to a model. Retryable ones
  are retried by the model wrapper; what is left becomes an ``error`` record, never a model
  failure.
* ``ToolError``: raised by a tool implementation for an expected failure; its message is returned
  to the model as the tool result and the call is scored as a failed execution.
* ``ToolBug``: any other exception out of a tool implementation. It is a bug in the tool, not the
  model's fault: the case becomes an ``error`` record with the traceback, flagged in quality
  control, excluded from accuracy and re-run by ``--resume``.
* ``ToolServerFault``: a live tool server (MCP) did not answer a call in time or went away. Like a
  ``ToolBug`` it is infrastructure (an ``error`` record re-run by ``--resume``), typed
  ``tool_server_timeout`` or ``tool_server_lost`` rather than flagged as a tool implementation's bug;
  ``cassette_miss`` when a replayed run meets a call its cassette does not hold.
"""

from __future__ import annotations

from typing import Literal


class CallbenchError(Exception):
    """Base class of every error callbench raises on purpose."""


class UserError(CallbenchError):
    """A problem the user can fix: bad file, unknown name, impossible option."""


class ConfigError(UserError):
    """An invalid option or combination of options."""


class SuiteError(UserError):
    """A malformed case or suite file. The message names the file, line or case id."""


class ContractError(UserError):
    """A malformed tool contract. The message names the file and the problem."""


class PoolingError(UserError):
    """A request to pool or compare figures across tiers or harness modes."""


class MissingExtraError(UserError):
    """Something asked for needs an optional extra that is not installed (see :func:`missing_extra`)."""


EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "agents": ("openai", "agents"),
    "hf": ("torch", "transformers"),
    "review": ("statsmodels", "krippendorff"),
    "otel": ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"),
}
"""The modules each optional extra (``pyproject.toml``) brings that callbench checks before it starts."""


def missing_extra(what: str, module: str, extra: str | None = None, where: str = "") -> MissingExtraError:
    """The one line for a missing optional module: ``WHAT needs the module 'M', which is not
    installed: pip install 'callbench[EXTRA]'`` (the extra found from ``module`` when not given;
    ``where`` names another Python than this one)."""
    extra = extra or next((name for name, mods in EXTRA_MODULES.items() if module in mods), None)
    fix = f"pip install 'callbench[{extra}]'" if extra else "install it"
    return MissingExtraError(f"{what} needs the module {module!r}, which is not installed{where}: {fix}")


def require_extra(extra: str, what: str) -> None:
    """Raise :func:`missing_extra` when a module of ``extra`` cannot be found (nothing is imported)."""
    from importlib.util import find_spec

    for module in EXTRA_MODULES[extra]:
        try:
            found = find_spec(module) is not None
        except (ImportError, ValueError):  # a parent package missing, a module set to None
            found = False
        if not found:
            raise missing_extra(what, module, extra)


class ProviderError(CallbenchError):
    """A failure talking to a model service (infrastructure, not model behaviour)."""

    retryable: bool = False


class TransientProviderError(ProviderError):
    """5xx, timeout, dropped connection, truncated body: worth retrying."""

    retryable = True

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RateLimitedError(TransientProviderError):
    """HTTP 429 or an equivalent provider signal."""


class FatalProviderError(ProviderError, UserError):
    """400/401/403/404: retrying cannot help; the run stops with a message saying what to fix."""


class ToolError(CallbenchError):
    """Raised by a tool implementation; the message goes back to the model as the result."""


class ToolBug(CallbenchError):
    """A tool implementation raised something other than ``ToolError`` (a harness fault)."""

    def __init__(self, tool: str, error: BaseException, traceback_text: str) -> None:
        super().__init__(f"tool {tool!r} raised {type(error).__name__}: {error}")
        self.tool = tool
        self.error_type = type(error).__name__
        self.traceback = traceback_text


ToolServerFaultKind = Literal[
    "tool_server_timeout",
    "tool_server_lost",
    "tool_server_bad_result",
    "tool_server_too_large",
    "cassette_miss",
]


class ToolServerFault(CallbenchError):
    """A live tool server did not answer a call in time (``tool_server_timeout``), died, broke the
    connection or could not be started again (``tool_server_lost``), or answered with structured
    content its own declared ``outputSchema`` refuses (``tool_server_bad_result``), or with an answer
    over the size limit on one message (``tool_server_too_large``); or, under ``--replay``, a call the
    cassette does not hold was refused (``cassette_miss``, :mod:`callbench.executors.cassette`): the
    case's error record type."""

    def __init__(self, kind: ToolServerFaultKind, message: str) -> None:
        super().__init__(message)
        self.kind: ToolServerFaultKind = kind
