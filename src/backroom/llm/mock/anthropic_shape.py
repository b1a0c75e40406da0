"""The mock's answers in Anthropic's shape: its error bodies and rate-limit headers.

The mock's limits and scripted faults answer in OpenAI's shape; an answer to
`/v1/messages` is reshaped here, so the same machinery serves both APIs:

    error body   {"type": "error", "error": {"type": "rate_limit_error", "message"}},
                 the type following the status (529: `overloaded_error`)
    headers      `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` become
                 `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`, each
                 reset an RFC 3339 time; `retry-after-ms` is dropped (Anthropic sends
                 `retry-after` in seconds)

Error bodies in another shape (a scripted `body=` fault) are left as they are.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from fastapi.responses import JSONResponse
from starlette.responses import Response

from backroom.llm.ratelimit_headers import parse_duration_ms

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_FIRST_SERVER_ERROR = 500
_OPENAI_PREFIX = "x-ratelimit-"
_KEPT = ("retry-after", "x-should-retry", "llm_provider-")


def error_type(status: int) -> str:
    """Anthropic's error type for an HTTP status."""
    fallback = "api_error" if status >= _FIRST_SERVER_ERROR else "invalid_request_error"
    return _ERROR_TYPES.get(status, fallback)


def _rfc3339(ms: int) -> str:
    return (
        datetime.fromtimestamp(ms / 1000, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def anthropic_headers(headers: dict[str, str], now: int) -> dict[str, str]:
    """The rate-limit and retry headers among `headers`, in Anthropic's style."""
    converted: dict[str, str] = {}
    for name, value in headers.items():
        if name.startswith(_OPENAI_PREFIX):
            field, kind = name.removeprefix(_OPENAI_PREFIX).split("-", 1)
            reset = field == "reset"
            converted[f"anthropic-ratelimit-{kind}-{field}"] = (
                _rfc3339(now + parse_duration_ms(value)) if reset else value
            )
        elif name.startswith(_KEPT) and not name.endswith("retry-after-ms"):
            converted[name] = value
    return converted


def _anthropic_body(body: bytes, status: int) -> dict[str, object] | None:
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict) or "message" not in error:
        return None
    return {"type": "error", "error": {"type": error_type(status), "message": error["message"]}}


def as_anthropic(response: Response, now: int) -> Response:
    """`response` (an answer in OpenAI's shape) as Anthropic would send it."""
    headers = anthropic_headers(dict(response.headers.items()), now)
    if response.status_code >= 400 and isinstance(response, JSONResponse):
        body = _anthropic_body(bytes(response.body), response.status_code)
        if body is not None:
            return JSONResponse(body, response.status_code, headers)
    for name in [name for name in response.headers if name.startswith(_OPENAI_PREFIX)]:
        del response.headers[name]
    if "retry-after-ms" in response.headers:
        del response.headers["retry-after-ms"]
    response.headers.update(headers)
    return response
