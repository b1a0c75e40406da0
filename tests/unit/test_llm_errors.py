"""Provider failures mapped to Retryable and Permanent."""

from __future__ import annotations

import email.utils

import httpx2
import openai
import pytest

from backroom.core.errors import Permanent, Retryable
from backroom.llm.providers.openai.errors import (
    RateLimited,
    error_for_exception,
    error_for_response,
    error_for_stream_failure,
)
from backroom.llm.ratelimit_headers import RateLimitWindow

NOW = 1_800_000_000_000
REQUEST = httpx2.Request("POST", "http://provider.test/v1/responses")


def _for_status(
    status: int, headers: dict[str, str] | None = None, code: str | None = None
) -> Retryable | Permanent:
    return error_for_response(
        status, headers or {}, error_class="SomeError", message="it broke", code=code, now=NOW
    )


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_retryable_statuses(status: int) -> None:
    error = _for_status(status)
    assert isinstance(error, Retryable)
    assert str(error) == f"SomeError (HTTP {status}): it broke"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 413, 422])
def test_permanent_statuses(status: int) -> None:
    error = _for_status(status)
    assert isinstance(error, Permanent)
    assert str(error) == f"SomeError (HTTP {status}): it broke"


def test_should_retry_header_wins_over_the_status() -> None:
    assert isinstance(_for_status(400, {"x-should-retry": "true"}), Retryable)
    assert isinstance(_for_status(503, {"x-should-retry": "false"}), Permanent)
    assert isinstance(_for_status(429, {"x-should-retry": "false"}), Permanent)
    assert isinstance(_for_status(503, {"x-should-retry": "maybe"}), Retryable)


def test_insufficient_quota_is_permanent_and_says_so() -> None:
    error = _for_status(429, {"retry-after": "1"}, code="insufficient_quota")
    assert isinstance(error, Permanent)
    assert str(error).startswith("insufficient_quota: the provider account has no quota")
    assert str(error).endswith("SomeError (HTTP 429): it broke")


def test_a_rate_limit_carries_its_wait_and_the_limit_headers() -> None:
    headers = {
        "retry-after-ms": "1500",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "1.5s",
    }
    error = _for_status(429, headers, code="rate_limit_exceeded")
    assert isinstance(error, RateLimited)
    assert error.after_ms == 1500
    assert error.rate_limits.requests == RateLimitWindow(remaining=0, reset_ms=1500)


def _wait(status: int, headers: dict[str, str]) -> int | None:
    error = _for_status(status, headers)
    assert isinstance(error, Retryable)
    return error.after_ms


def test_retryable_answers_keep_long_and_dated_waits() -> None:
    in_five_minutes = email.utils.formatdate((NOW + 300_000) / 1000, usegmt=True)
    assert _wait(503, {"retry-after": "130"}) == 130_000
    assert _wait(503, {"retry-after": in_five_minutes}) == 300_000
    assert _wait(500, {}) is None


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("server_error", Retryable),
        ("rate_limit_exceeded", Retryable),
        ("vector_store_timeout", Retryable),
        (None, Retryable),
        ("invalid_prompt", Permanent),
        ("image_content_policy_violation", Permanent),
        ("insufficient_quota", Permanent),
    ],
)
def test_failures_inside_a_stream(code: str | None, kind: type[Exception]) -> None:
    error = error_for_stream_failure(code, "went wrong")
    assert type(error) is kind
    assert "went wrong" in str(error)


def test_sdk_status_errors_name_the_class_and_the_providers_message() -> None:
    response = httpx2.Response(429, headers={"Retry-After": "3"}, request=REQUEST)
    body = {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded"}
    sdk_error = openai.RateLimitError("Error code: 429 - ...", response=response, body=body)
    error = error_for_exception(sdk_error, now=NOW)
    assert isinstance(error, RateLimited)
    assert str(error) == (
        "RateLimitError (HTTP 429): Rate limit reached for requests (POST /v1/responses)"
    )
    assert error.after_ms == 3000


def test_sdk_status_errors_without_a_json_body_keep_the_body() -> None:
    response = httpx2.Response(502, request=REQUEST)
    sdk_error = openai.InternalServerError("Error code: 502", response=response, body="Bad Gateway")
    error = error_for_exception(sdk_error, now=NOW)
    assert type(error) is Retryable
    assert str(error) == "InternalServerError (HTTP 502): Bad Gateway (POST /v1/responses)"


def test_sdk_status_errors_without_a_body_keep_the_sdk_message() -> None:
    response = httpx2.Response(502, request=REQUEST)
    sdk_error = openai.InternalServerError("Error code: 502", response=response, body=None)
    error = error_for_exception(sdk_error, now=NOW)
    assert str(error) == "InternalServerError (HTTP 502): Error code: 502 (POST /v1/responses)"


def test_a_long_body_is_trimmed_and_kept_on_one_line() -> None:
    response = httpx2.Response(500, request=REQUEST)
    html = "<html>\n  <body>" + "x" * 1000 + "</body>\n</html>"
    sdk_error = openai.InternalServerError("Error code: 500", response=response, body=html)
    message = str(error_for_exception(sdk_error, now=NOW))
    assert message.startswith("InternalServerError (HTTP 500): <html> <body>xxx")
    assert message.endswith("x... (POST /v1/responses)")
    assert len(message) == len("InternalServerError (HTTP 500): ") + 500 + len(
        "... (POST /v1/responses)"
    )


@pytest.mark.parametrize(
    ("body", "hinted"),
    [
        ({"detail": "Not Found"}, True),
        ("404 page not found", True),
        ({"message": "The model `x` does not exist", "code": "model_not_found"}, False),
    ],
)
def test_a_404_from_the_responses_api_suggests_chat_only(body: object, hinted: bool) -> None:
    response = httpx2.Response(404, request=REQUEST)
    sdk_error = openai.NotFoundError("Error code: 404", response=response, body=body)
    message = str(error_for_exception(sdk_error, now=NOW))
    assert message.startswith("NotFoundError (HTTP 404): ")
    assert ("set `chat_only = true` on its provider" in message) is hinted
    chat_request = httpx2.Request("POST", "http://provider.test/v1/chat/completions")
    chat_response = httpx2.Response(404, request=chat_request)
    on_chat = openai.NotFoundError("Error code: 404", response=chat_response, body=body)
    assert "chat_only" not in str(error_for_exception(on_chat, now=NOW))


def test_timeouts_and_connection_errors_are_retryable() -> None:
    timeout = error_for_exception(openai.APITimeoutError(request=REQUEST), now=NOW)
    refused = error_for_exception(openai.APIConnectionError(request=REQUEST), now=NOW)
    assert type(timeout) is Retryable
    assert str(timeout) == "APITimeoutError: Request timed out."
    assert type(refused) is Retryable
    assert str(refused) == "APIConnectionError: Connection error."


def test_a_connection_error_names_its_cause() -> None:
    try:
        try:
            raise httpx2.RemoteProtocolError("peer closed connection")
        except httpx2.RemoteProtocolError as cause:
            raise openai.APIConnectionError(request=REQUEST) from cause
    except openai.APIConnectionError as sdk_error:
        error = error_for_exception(sdk_error, now=NOW)
    assert str(error) == (
        "APIConnectionError: Connection error. (RemoteProtocolError: peer closed connection)"
    )


def test_an_error_reported_mid_stream_is_judged_by_its_code() -> None:
    body = {"message": "overloaded", "type": "server_error", "code": "server_error"}
    streamed = openai.APIError("overloaded", REQUEST, body=body)
    error = error_for_exception(streamed, now=NOW)
    assert type(error) is Retryable
    assert str(error) == "APIError (server_error): overloaded"


def test_other_sdk_errors_are_permanent() -> None:
    error = error_for_exception(openai.OpenAIError("no api_key given"), now=NOW)
    assert type(error) is Permanent
    assert str(error) == "OpenAIError: no api_key given"


def test_a_429_behind_litellm_waits_as_the_upstream_asked() -> None:
    headers = {
        "llm_provider-retry-after": "3",
        "llm_provider-x-ratelimit-remaining-requests": "0",
    }
    error = _for_status(429, headers, code="rate_limit_exceeded")

    assert isinstance(error, RateLimited)
    assert error.after_ms == 3000
    assert error.rate_limits.retry_after_ms == 3000
    assert error.rate_limits.requests.remaining == 0


def test_a_relayed_should_retry_false_makes_a_429_permanent() -> None:
    assert isinstance(_for_status(429, {"llm_provider-x-should-retry": "false"}), Permanent)


def test_a_429_without_any_wait_leaves_the_backoff_to_the_lane() -> None:
    error = _for_status(429, {})

    assert isinstance(error, RateLimited)
    assert error.after_ms is None
