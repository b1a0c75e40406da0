"""The client's exceptions: one per problem the server may answer with.

BackroomError
├── ServerUnreachable        no answer after the retries
├── WaitTimeout              `wait` gave up before the job ended
└── ApiError                 the server answered with a problem document
    ├── Unauthorized         401
    ├── NotFound             404
    ├── Conflict             409
    ├── PayloadTooLarge      413
    ├── InvalidRequest       422
    │   └── IdempotencyKeyReused
    ├── QueueFull            429 (`retry_after_s`)
    └── ServerError          5xx
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx

from backroom.core.errors import BackroomError

if TYPE_CHECKING:
    from backroom.client.plans import RemoteJob


class ServerUnreachable(BackroomError):
    """No connection to the server, even after the client's retries."""


class WaitTimeout(BackroomError):
    """`wait` reached its timeout; `job` is the last state it saw."""

    def __init__(self, job: RemoteJob) -> None:
        super().__init__(f"job {job.id} is still {job.status} after the wait")
        self.job = job


class ApiError(BackroomError):
    """The server refused a request; `problem` is its RFC 9457 document."""

    def __init__(self, problem: dict[str, Any]) -> None:
        self.problem = problem
        self.status: int = problem.get("status", 0)
        self.type: str = problem.get("type", "about:blank")
        self.title: str = problem.get("title", "")
        self.detail: str = problem.get("detail", "")
        super().__init__(f"{self.status} {self.title}: {self.detail}")


class Unauthorized(ApiError):
    """401: the API key is missing, unknown or revoked."""


class NotFound(ApiError):
    """404: no such job, or not the caller's."""


class Conflict(ApiError):
    """409: the job's state does not allow the operation."""


class PayloadTooLarge(ApiError):
    """413: the request body is over the server's limit."""


class InvalidRequest(ApiError):
    """422: a field is invalid; `problem["errors"]` names it."""


class IdempotencyKeyReused(InvalidRequest):
    """422: the idempotency key was already used with a different request."""


class QueueFull(ApiError):
    """429: the tenant is at its cap of queued jobs; retry after `retry_after_s`."""

    def __init__(self, problem: dict[str, Any], retry_after_s: float | None) -> None:
        super().__init__(problem)
        self.retry_after_s = retry_after_s


class ServerError(ApiError):
    """5xx: the server failed (after the client's retries)."""


_ERRORS_BY_STATUS: dict[int, type[ApiError]] = {
    401: Unauthorized,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: InvalidRequest,
}


def retry_after_s(response: httpx.Response) -> float | None:
    """The response's Retry-After in seconds, when it gives a number."""
    value = response.headers.get("Retry-After", "")
    return float(value) if value.isdigit() else None


def error_for(response: httpx.Response) -> ApiError:
    """The typed error a problem response stands for."""
    try:
        problem = response.json()
    except ValueError:
        problem = None
    if not isinstance(problem, dict):
        # Not a problem document (a proxy's error page, say): keep what it said.
        problem = {
            "status": response.status_code,
            "title": response.reason_phrase,
            "detail": response.text[:500],
        }
    return problem_error(response.status_code, problem, retry_after_s(response))


def problem_error(
    status: int, problem: dict[str, Any], retry_after: float | None = None
) -> ApiError:
    """The typed error for a problem document with `status` (and its Retry-After)."""
    if status == 429:
        return QueueFull(problem, retry_after)
    if status >= 500:
        return ServerError(problem)
    if str(problem.get("type", "")).endswith(":idempotency-conflict"):
        return IdempotencyKeyReused(problem)
    return _ERRORS_BY_STATUS.get(status, ApiError)(problem)
