"""What every operation answers: a `Reply` (status, plain-data body, headers).

Errors are replies too: RFC 9457 problem details built by `problem`, which the HTTP
API sends as they are and the CLI prints as one line (their `detail`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from backroom.core.job import JSON, Job

PROBLEM_TYPE_PREFIX = "urn:backroom:problem:"
"""Problem types are URNs: stable names, not pages to fetch (RFC 9457, section 3.1.1)."""

HTTP_TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    422: "Unprocessable Content",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


@dataclass(frozen=True, slots=True)
class Reply:
    """What an operation answers: a status, a JSON-ready body and response headers."""

    status: int
    body: JSON
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def is_problem(self) -> bool:
        """True when the body is a problem document (any 4xx or 5xx)."""
        return self.status >= 400

    @property
    def detail(self) -> str:
        """A problem's one-line explanation ("" for a success)."""
        if not self.is_problem or not isinstance(self.body, dict):
            return ""
        return str(self.body.get("detail", ""))


def problem(
    status: int,
    detail: str,
    *,
    kind: str | None = None,
    title: str | None = None,
    headers: dict[str, str] | None = None,
    **extensions: JSON,
) -> Reply:
    """An RFC 9457 problem reply; `kind` names a backroom problem type, else about:blank."""
    body: dict[str, JSON] = {
        "type": "about:blank" if kind is None else PROBLEM_TYPE_PREFIX + kind,
        "title": title or HTTP_TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        **extensions,
    }
    return Reply(status, body, headers or {})


def invalid_field(location: Sequence[str | int], message: str, **extensions: JSON) -> Reply:
    """A 422 naming the one field (`("body", "task")`) that is wrong and why; the
    `extensions` are members of the problem that help fix it (the allowed values)."""
    name = ".".join(str(part) for part in location)
    return problem(
        422,
        f"{name}: {message}",
        kind="validation-error",
        title="Invalid request",
        errors=[{"loc": list(location), "msg": message, "type": "value_error"}],
        **extensions,
    )


def job_not_found(job_id: int) -> Reply:
    """A 404 for a job that does not exist or belongs to another tenant."""
    return problem(404, f"job {job_id} not found")


def state_conflict(job: Job, what: str) -> Reply:
    """A 409: `job` is in a state that does not allow what was asked."""
    return problem(
        409,
        f"job {job.id} is {job.state} and {what}",
        kind="job-state-conflict",
        title="Job is in the wrong state",
        job_status=str(job.state),
    )


def job_location(job_id: int) -> str:
    """The URL path of a job."""
    return f"/v1/jobs/{job_id}"
