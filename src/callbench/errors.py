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
  ``tool_server_timeout`` or ``tool_server_lost`` rather than flagged as a tool implementation's bug.
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


ToolServerFaultKind = Literal["tool_server_timeout", "tool_server_lost", "tool_server_bad_result"]


class ToolServerFault(CallbenchError):
    """A live tool server did not answer a call in time (``tool_server_timeout``), died, broke the
    connection or could not be started again (``tool_server_lost``), or answered with structured
    content its own declared ``outputSchema`` refuses (``tool_server_bad_result``): the case's error
    record type."""

    def __init__(self, kind: ToolServerFaultKind, message: str) -> None:
        super().__init__(message)
        self.kind: ToolServerFaultKind = kind
