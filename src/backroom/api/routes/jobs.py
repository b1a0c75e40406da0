"""`/v1/jobs`: submit, read, list and cancel jobs. Each route only translates."""

# No `from __future__ import annotations`: FastAPI must see the route signatures'
# local `CallerDependency` alias as a real type, not as a string it cannot resolve.
import re
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Path, Query, Response
from pydantic import BeforeValidator

from backroom.api.auth import Authenticator
from backroom.api.headers import (
    KEY_HEADER_PATTERN,
    MAX_QUOTED_KEY_LENGTH,
    InvalidIdempotencyKey,
    parse_idempotency_key,
)
from backroom.api.models.jobs import JobDocument, JobPage, Name, SubmitRequest
from backroom.api.responses import problem_responses, to_response
from backroom.app import App
from backroom.core.job import JobState
from backroom.service import cancel, jobs, submit
from backroom.service.callers import Caller
from backroom.service.jobs import JobQuery
from backroom.service.replies import invalid_field
from backroom.service.submit import SubmitPolicy

MAX_JOB_ID = 2**63 - 1
CURSOR_PATTERN = r"^[1-9][0-9]{0,17}$"
JOB_ID_PATTERN = r"^[1-9][0-9]{0,18}$"
_CANONICAL_ID = re.compile(JOB_ID_PATTERN)


def _canonical_id(raw: object) -> object:
    # A job has one URL: `1.0`, `+1`, `01` or ` 1` would otherwise all parse as job 1.
    if isinstance(raw, str) and not _CANONICAL_ID.match(raw):
        raise ValueError("a job id is a positive integer in decimal, without a sign or zeros")
    return raw


JobId = Annotated[
    int,
    Path(ge=1, le=MAX_JOB_ID, description="The job's id, in decimal without a sign or zeros."),
    BeforeValidator(_canonical_id),
]
Cursor = Annotated[
    str | None, Query(pattern=CURSOR_PATTERN, description="`next_cursor` of the last page.")
]
Limit = Annotated[int, Query(ge=1, le=200, description="Jobs per page.")]

_JOB_HEADERS = {"Location": {"schema": {"type": "string"}, "description": "The job's URL."}}
_REPLAYED = {"Idempotent-Replayed": {"schema": {"type": "string", "enum": ["true"]}}}


def jobs_router(app: App, authenticate: Authenticator, policy: SubmitPolicy) -> APIRouter:
    """The job routes of `app`, for callers `authenticate` admits."""
    router = APIRouter(prefix="/v1/jobs", tags=["jobs"])
    CallerDependency = Annotated[Caller, Depends(authenticate)]

    @router.post(
        "",
        status_code=202,
        response_model=JobDocument,
        summary="Submit a job",
        responses={
            202: {"description": "A new job.", "headers": _JOB_HEADERS},
            200: {
                "description": "The job this Idempotency-Key already created (a replay).",
                "model": JobDocument,
                "headers": {**_JOB_HEADERS, **_REPLAYED},
            },
            **problem_responses(401, 413, 422, 429),
        },
    )
    async def submit_job(
        body: SubmitRequest,
        caller: CallerDependency,
        idempotency_key: Annotated[
            str | None,
            Header(
                alias="Idempotency-Key",
                description=(
                    '1-255 printable ASCII characters, bare or as a quoted string ("abc", '
                    'with \\" and \\\\ escapes, so up to 512 characters in all).'
                ),
                min_length=1,
                max_length=MAX_QUOTED_KEY_LENGTH,
                pattern=KEY_HEADER_PATTERN,
            ),
        ] = None,
        traceparent: Annotated[
            str | None,
            Header(description="W3C Trace Context: each attempt's span continues this trace."),
        ] = None,
    ) -> Response:
        key = None
        if idempotency_key is not None:
            try:
                key = parse_idempotency_key(idempotency_key)
            except InvalidIdempotencyKey as error:
                return to_response(invalid_field(("header", "Idempotency-Key"), str(error)))
        submission = body.to_submission(key, traceparent)
        return to_response(await submit.submit_job(app, caller, submission, policy))

    @router.get(
        "",
        response_model=JobPage,
        summary="List jobs, newest first",
        responses=problem_responses(401, 422),
    )
    async def list_jobs(
        caller: CallerDependency,
        status: Annotated[list[JobState] | None, Query(description="Only these states.")] = None,
        queue: Annotated[Name | None, Query(description="Only this queue.")] = None,
        task: Annotated[Name | None, Query(description="Only this task.")] = None,
        cursor: Cursor = None,
        limit: Limit = 50,
    ) -> Response:
        query = JobQuery(tuple(status or ()), queue, task, cursor, limit)
        return to_response(await jobs.list_jobs(app, caller, query))

    @router.get(
        "/{job_id}",
        response_model=JobDocument,
        summary="Get a job, with its attempt history",
        responses=problem_responses(401, 404, 422),
    )
    async def get_job(job_id: JobId, caller: CallerDependency) -> Response:
        return to_response(await jobs.get_job(app, caller, job_id))

    @router.post(
        "/{job_id}/cancel",
        response_model=JobDocument,
        summary="Cancel a job",
        responses={
            200: {"description": "The job is cancelled."},
            202: {
                "description": "The job is running; its worker was asked to stop it.",
                "model": JobDocument,
            },
            **problem_responses(401, 404, 409, 422),
        },
    )
    async def cancel_job(job_id: JobId, caller: CallerDependency) -> Response:
        return to_response(await cancel.cancel_job(app, caller, job_id))

    return router
