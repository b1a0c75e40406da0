"""From the service's `Reply` to an HTTP response, and the OpenAPI entries for problems."""

from __future__ import annotations

from typing import Any

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


def to_response(reply: Reply) -> JSONResponse:
    """The JSON response for `reply`: problem+json for errors."""
    return JSONResponse(
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
