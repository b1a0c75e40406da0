"""Provider failures as backroom's `Retryable` and `Permanent`.

backroom is the only retry layer (clients are built with `max_retries=0`), so this
module decides what the SDK would otherwise have decided, with two differences: a
Retry-After longer than two minutes is honoured rather than refused, and a 429 that
means "out of quota" is permanent, since no wait refills an account.

    retryable  408, 409, 429, 5xx, timeouts, connection errors, server errors mid-stream
    permanent  400, 401, 403, 404, 422 (every other status), insufficient_quota
    override   `x-should-retry: true|false` from the provider wins over the status

Every message names the error class and the provider's own words (see `.error_text`).
"""

from __future__ import annotations

from collections.abc import Mapping

import openai

from backroom.core.errors import Permanent, Retryable
from backroom.llm.provider import RateLimited
from backroom.llm.providers.openai.error_text import connection_message, provider_message
from backroom.llm.ratelimit_headers import RateLimitSnapshot, openai_rate_limits

QUOTA_CODE = "insufficient_quota"
_RETRYABLE_STATUSES = frozenset({408, 409, 429})
_FIRST_SERVER_ERROR = 500
# Failure codes a stream may end with that a later attempt can get past; every other
# code (invalid_prompt, invalid_image, policy violations...) fails the same way again.
_TRANSIENT_STREAM_CODES = frozenset({"server_error", "rate_limit_exceeded", "vector_store_timeout"})

__all__ = [
    "QUOTA_CODE",
    "RateLimited",
    "error_for_exception",
    "error_for_response",
    "error_for_stream_failure",
]


def _quota_error(detail: str) -> Permanent:
    return Permanent(
        f"{QUOTA_CODE}: the provider account has no quota or credit left, so retrying "
        f"cannot help; add credit or raise the limit, then redrive. {detail}"
    )


def _is_retryable_status(status: int, snapshot: RateLimitSnapshot) -> bool:
    if snapshot.should_retry is not None:
        return snapshot.should_retry
    return status in _RETRYABLE_STATUSES or status >= _FIRST_SERVER_ERROR


def error_for_response(
    status: int,
    headers: Mapping[str, str],
    *,
    error_class: str,
    message: str,
    code: str | None,
    now: int,
) -> Retryable | Permanent:
    """The job error for an HTTP error answer.

    `headers` needs lower-case names or case-insensitive lookup; `code` is the error
    body's `code` (or `type`); `now` (ms since the epoch) dates an HTTP-date Retry-After.
    """
    detail = f"{error_class} (HTTP {status}): {message}"
    if status == 429 and code == QUOTA_CODE:
        return _quota_error(detail)
    snapshot = openai_rate_limits(headers, now)
    if not _is_retryable_status(status, snapshot):
        return Permanent(detail)
    if status == 429:
        return RateLimited(detail, after_ms=snapshot.retry_after_ms, rate_limits=snapshot)
    return Retryable(detail, after_ms=snapshot.retry_after_ms)


def error_for_stream_failure(
    code: str | None, message: str, *, error_class: str = "StreamError"
) -> Retryable | Permanent:
    """The job error for a failure reported inside a stream rather than by HTTP status."""
    detail = f"{error_class} ({code or 'no code'}): {message}"
    if code == QUOTA_CODE:
        return _quota_error(detail)
    if code is None or code in _TRANSIENT_STREAM_CODES:
        return Retryable(detail)
    return Permanent(detail)


def error_for_exception(error: openai.OpenAIError, *, now: int) -> Retryable | Permanent:
    """The job error for an exception the `openai` SDK raised.

    `now` (ms since the epoch) is needed to read a Retry-After given as an HTTP date.
    """
    error_class = type(error).__name__
    if isinstance(error, openai.APIStatusError):
        return error_for_response(
            error.status_code,
            error.response.headers,
            error_class=error_class,
            message=provider_message(error),
            code=error.code or error.type,
            now=now,
        )
    if isinstance(error, openai.APIConnectionError):  # APITimeoutError included
        return Retryable(f"{error_class}: {connection_message(error)}")
    if isinstance(error, openai.APIError):
        # No status: the provider reported the failure inside a stream.
        return error_for_stream_failure(
            error.code or error.type, provider_message(error), error_class=error_class
        )
    return Permanent(f"{error_class}: {error}")
