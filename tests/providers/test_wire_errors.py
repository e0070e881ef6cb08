"""Status mapping and Retry-After parsing (pure)."""

from __future__ import annotations

import email.utils
import json

import pytest

from callbench.errors import FatalProviderError, RateLimitedError, TransientProviderError
from callbench.providers.wire import Endpoint, error_for_status, retry_after_seconds
from callbench.secrets import register_secret

WHERE = Endpoint("openai", "m", "http://127.0.0.1:1/v1", "OPENAI_API_KEY")


def test_retry_after_seconds_date_and_garbage() -> None:
    assert retry_after_seconds("2.5") == 2.5 and retry_after_seconds("-3") == 0.0
    date = email.utils.formatdate(1_000_030.0, usegmt=True)
    assert retry_after_seconds(date, now=1_000_000.0) == pytest.approx(30.0)
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, RateLimitedError),
        (408, TransientProviderError),
        (409, TransientProviderError),
        (500, TransientProviderError),
        (529, TransientProviderError),
        (400, FatalProviderError),
        (403, FatalProviderError),
        (422, FatalProviderError),
        (418, FatalProviderError),
    ],
)
def test_status_mapping(status: int, kind: type[Exception]) -> None:
    error = error_for_status(status, '{"error": {"message": "nope"}}', {"retry-after": "7"}, WHERE)
    assert type(error) is kind and "nope" in str(error)
    if isinstance(error, TransientProviderError):
        assert error.retry_after == 7.0


def test_error_bodies_are_scrubbed_and_one_line() -> None:
    register_secret("sk-echoed-secret-12345")
    error = error_for_status(401, "bad key sk-echoed-secret-12345\nsecond line", {}, WHERE)
    assert "sk-echoed" not in str(error) and "\n" not in str(error) and "OPENAI_API_KEY" in str(error)


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 8192 tokens",
        "prompt is too long: 210000 tokens > 200000 maximum",
    ],
)
def test_context_overflow_is_a_case_error_not_fatal(message: str) -> None:
    from callbench.providers.wire import ContextLengthError

    error = error_for_status(400, json.dumps({"error": {"message": message}}), {}, WHERE)
    assert type(error) is ContextLengthError and not isinstance(error, FatalProviderError)
    assert not error.retryable


def test_a_chat_completions_refusal_that_wants_the_responses_api_names_the_provider_to_use() -> None:
    """GPT-5.x refuses function tools with reasoning_effort on /v1/chat/completions: one line that
    says which model string to use instead (the reverse of the Responses provider's own check)."""
    body = json.dumps(
        {
            "error": {
                "message": "Function tools with reasoning_effort are not supported for gpt-5.2 in "
                "/v1/chat/completions. Please use /v1/responses instead.",
                "type": "invalid_request_error",
            }
        }
    )
    where = Endpoint("openai", "gpt-5.2", "https://api.openai.com/v1", "OPENAI_API_KEY")
    error = error_for_status(400, body, {}, where)
    assert isinstance(error, FatalProviderError)
    assert "use openai-responses:gpt-5.2" in str(error) and "\n" not in str(error)
    other = error_for_status(400, json.dumps({"error": {"message": "unknown field 'foo'"}}), {}, where)
    assert "openai-responses" not in str(other)
