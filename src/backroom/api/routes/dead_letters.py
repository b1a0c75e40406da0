"""`/v1/dead-letters`: jobs that failed for good, and sending them back to the queue."""

# No `from __future__ import annotations`: FastAPI must see the route signatures'
# local `CallerDependency` alias as a real type, not as a string it cannot resolve.
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from backroom.api.auth import Authenticator
from backroom.api.models.jobs import JobDocument, JobPage, Name, RedriveRequest, RedriveResult
from backroom.api.responses import problem_responses, to_response
from backroom.api.routes.jobs import Cursor, JobId, Limit
from backroom.app import App
from backroom.service import jobs, redrive
from backroom.service.callers import Caller
from backroom.service.jobs import JobQuery


def dead_letters_router(app: App, authenticate: Authenticator) -> APIRouter:
    """The dead-letter routes of `app`, for callers `authenticate` admits."""
    router = APIRouter(prefix="/v1/dead-letters", tags=["dead letters"])
    CallerDependency = Annotated[Caller, Depends(authenticate)]

    @router.get(
        "",
        response_model=JobPage,
        summary="List failed jobs, newest first",
        responses=problem_responses(401, 422),
    )
    async def list_dead_letters(
        caller: CallerDependency,
        queue: Annotated[Name | None, Query(description="Only this queue.")] = None,
        task: Annotated[Name | None, Query(description="Only this task.")] = None,
        cursor: Cursor = None,
        limit: Limit = 50,
    ) -> Response:
        query = JobQuery((), queue, task, cursor, limit)
        return to_response(await jobs.list_dead_letters(app, caller, query))

    @router.post(
        "/redrive",
        response_model=RedriveResult,
        summary="Redrive every failed job (of a task, of a queue)",
        responses=problem_responses(401, 413, 422),
    )
    async def redrive_all(caller: CallerDependency, body: RedriveRequest) -> Response:
        return to_response(await redrive.redrive_jobs(app, caller, body.task, body.queue))

    @router.post(
        "/{job_id}/redrive",
        response_model=JobDocument,
        summary="Redrive one failed job",
        responses=problem_responses(401, 404, 409, 422),
    )
    async def redrive_one(job_id: JobId, caller: CallerDependency) -> Response:
        return to_response(await redrive.redrive_job(app, caller, job_id))

    return router
