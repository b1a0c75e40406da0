"""From the service's `Reply` to an HTTP response, and the OpenAPI entries for problems."""

from __future__ import annotations

import json
import math
from typing import Any

import pydantic_core
from fastapi.responses import JSONResponse

from backroom.service.replies import Reply

PROBLEM_MEDIA_TYPE = "application/problem+json"

_PROBLEM_DESCRIPTIONS = {
    401: "Missing or unknown API key.",
    403: "Only an admin may do this.",
    404: "No such job (or another tenant's).",
    409: "The job is in a state that does not allow this.",
    413: "The request body is over the limit.",
    422: "Invalid request: the problem's `errors` name the fields.",
    429: (
        "The tenant is at its cap of queued jobs, or has spent its daily budget for LLM "
        "jobs: retry after `Retry-After` seconds."
    ),
    503: "The store is unreachable.",
}


class _RobustJSONResponse(JSONResponse):
    """JSON that renders whatever the store holds.

    A row written by an older version may hold what is now refused on the way in (a
    lone surrogate in a metadata key, NaN in a result): rather than answer 500 for
    every read and listing that includes it, such a body is written with escapes
    (`\\ud800`, valid JSON text) and non-finite numbers as null.
    """

    def render(self, content: Any) -> bytes:
        """The body as UTF-8 JSON text."""
        try:
            # pydantic-core's encoder: the same JSON as the standard library's, in a
            # quarter of its time (a batch's answer is a thousand job documents).
            return pydantic_core.to_json(content, inf_nan_mode="null")
        except pydantic_core.PydanticSerializationError:
            pass  # a lone surrogate, or what JSON has no form for: the library decides
        try:
            return super().render(content)
        except ValueError:  # UnicodeEncodeError, or a non-finite float
            return json.dumps(
                _finite(content), ensure_ascii=True, allow_nan=False, separators=(",", ":")
            ).encode()


def _finite(value: Any) -> Any:
    """`value` with NaN and the infinities replaced by None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def to_response(reply: Reply) -> JSONResponse:
    """The JSON response for `reply`: problem+json for errors."""
    return _RobustJSONResponse(
        reply.body,
        status_code=reply.status,
        headers=reply.headers,
        media_type=PROBLEM_MEDIA_TYPE if reply.is_problem else "application/json",
    )


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries for these error statuses, all `Problem` documents."""
    entries: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        entry: dict[str, Any] = {
            "description": _PROBLEM_DESCRIPTIONS[status],
            "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
        if status == 429:
            entry["headers"] = {
                "Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}
            }
        entries[status] = entry
    return entries
