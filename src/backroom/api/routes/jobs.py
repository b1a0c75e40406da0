"""`/v1/jobs`: read, list and cancel jobs (submitting is `routes.submit`). Each route
only translates."""

# No `from __future__ import annotations`: FastAPI must see the route signatures'
# local `CallerDependency` alias as a real type, not as a string it cannot resolve.
import re
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Response
from pydantic import BeforeValidator

from backroom.api.auth import Authenticator
from backroom.api.models.jobs import JobDocument, JobPage, Name
from backroom.api.responses import problem_responses, to_response
from backroom.app import App
from backroom.core.job import JobState
from backroom.service import cancel, jobs
from backroom.service.callers import Caller
from backroom.service.jobs import JobQuery

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


def jobs_router(app: App, authenticate: Authenticator) -> APIRouter:
    """The job routes of `app`, for callers `authenticate` admits."""
    router = APIRouter(prefix="/v1/jobs", tags=["jobs"])
    CallerDependency = Annotated[Caller, Depends(authenticate)]

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
