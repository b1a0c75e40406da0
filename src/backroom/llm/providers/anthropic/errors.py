"""Anthropic's failures as backroom's `Retryable` and `Permanent` (the SDK never retries).

    retryable  408, 409, 429 (a `RateLimited`: its lane slows down), 529 overloaded,
               every other 5xx, timeouts, connection errors, and a stream's (or a
               batch line's) `overloaded_error`, `api_error`, `rate_limit_error` or
               `timeout_error`
    permanent  400, 401, 403, 404, 413 and every other status; a stream's other errors
    override   `x-should-retry: true|false` from the provider wins over the status

A wait named by `retry-after` is kept on the error (`after_ms`). Every message names the
error class, the status, Anthropic's error type and its own words, and the request.
"""

from __future__ import annotations

import anthropic

from backroom.core.errors import Permanent, Retryable
from backroom.llm.provider import RateLimited
from backroom.llm.ratelimit_headers import anthropic_rate_limits

BODY_CHARS = 500
"""How much of an error body that is not Anthropic's shape a message keeps."""
_RETRYABLE_STATUSES = frozenset({408, 409, 429})
_FIRST_SERVER_ERROR = 500
_FIRST_ERROR = 400
# Error types a stream may end with that a later attempt can get past.
_TRANSIENT_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})


def _words(error: anthropic.APIError) -> str:
    """Anthropic's own message, else the body as it came, trimmed."""
    message = getattr(error, "api_message", None)
    if not message:
        body = error.body
        message = body if isinstance(body, str) and body.strip() else error.message
    text = " ".join(str(message).split())
    return text if len(text) <= BODY_CHARS else text[:BODY_CHARS] + "..."


def _status_error(error: anthropic.APIStatusError, now: int) -> Retryable | Permanent:
    status = error.status_code
    kind = error.type or "no error type"
    request = error.request
    detail = (
        f"{type(error).__name__} (HTTP {status}, {kind}): {_words(error)} "
        f"({request.method} {request.url.path})"
    )
    if status < _FIRST_ERROR:
        # An `error` event inside a stream that had begun well (HTTP 200).
        return Retryable(detail) if error.type in _TRANSIENT_TYPES else Permanent(detail)
    snapshot = anthropic_rate_limits(error.response.headers, now)
    retryable = status in _RETRYABLE_STATUSES or status >= _FIRST_SERVER_ERROR
    if snapshot.should_retry is not None:
        retryable = snapshot.should_retry
    if not retryable:
        return Permanent(detail)
    if status == 429:
        return RateLimited(detail, after_ms=snapshot.retry_after_ms, rate_limits=snapshot)
    return Retryable(detail, after_ms=snapshot.retry_after_ms)


def error_for_type(error_type: str, message: str) -> Retryable | Permanent:
    """The job error for an error Anthropic reported by its type alone (a batch line's,
    or a stream's): retryable for the transient types, else permanent."""
    detail = f"{error_type}: {message}"
    return Retryable(detail) if error_type in _TRANSIENT_TYPES else Permanent(detail)


def error_for_exception(error: anthropic.AnthropicError, *, now: int) -> Retryable | Permanent:
    """The job error for an exception the `anthropic` SDK raised.

    `now` (ms since the epoch) is needed to read a Retry-After given as an HTTP date.
    """
    name = type(error).__name__
    if isinstance(error, anthropic.APIStatusError):
        return _status_error(error, now)
    if isinstance(error, anthropic.APIConnectionError):  # APITimeoutError included
        cause = error.__cause__
        reason = "" if cause is None or not str(cause) else f" ({type(cause).__name__}: {cause})"
        return Retryable(f"{name}: {error.message}{reason}")
    if isinstance(error, anthropic.APIError):
        return Retryable(f"{name}: {_words(error)}")  # an answer that did not parse
    return Permanent(f"{name}: {error}")
