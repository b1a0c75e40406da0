"""`POST /v1/jobs:batch`: up to 1,000 jobs in one request, each answered on its own."""

# No `from __future__ import annotations`: FastAPI must see the route signatures'
# local `CallerDependency` alias as a real type, not as a string it cannot resolve.
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response
from pydantic import TypeAdapter, ValidationError

from backroom.api.auth import Authenticator
from backroom.api.models.batch import BatchAnswer, BatchJob, BatchRequest
from backroom.api.problems import validation_problem
from backroom.api.responses import problem_responses, to_response
from backroom.app import App
from backroom.service.callers import Caller
from backroom.service.submit import SubmitPolicy
from backroom.service.submit_batch import Item, submit_batch

_JOBS = TypeAdapter(list[BatchJob])
"""Every job of a batch validated in one call: per job, a fraction of a call of its own."""


def _items(raw: list[dict[str, Any]]) -> list[Item]:
    """The submissions the batch's jobs ask for; a job whose fields are refused gets
    the 422 that validating it alone earns, and the others are submitted."""
    try:
        return [job.submission() for job in _JOBS.validate_python(raw)]
    except ValidationError:
        return [_item(job) for job in raw]


def _item(raw: dict[str, Any]) -> Item:
    """The submission one job of the batch asks for, or the 422 its fields earn."""
    try:
        return BatchJob.model_validate(raw).submission()
    except ValidationError as error:
        return validation_problem(error.errors(), ("body",))


def batch_router(app: App, authenticate: Authenticator, policy: SubmitPolicy) -> APIRouter:
    """The batch submission route of `app`, for callers `authenticate` admits."""
    router = APIRouter(tags=["jobs"])
    CallerDependency = Annotated[Caller, Depends(authenticate)]

    @router.post(
        "/v1/jobs:batch",
        response_model=BatchAnswer,
        summary="Submit up to 1,000 jobs",
        description=(
            "Each job is checked, capped and budgeted as `POST /v1/jobs` would, and its "
            "result (202, 200 for a replay of its `idempotency_key`, or a problem) is in "
            "`results`, in the order of `jobs`. The jobs accepted are stored in one "
            "transaction."
        ),
        responses=problem_responses(401, 413, 422),
    )
    async def submit_jobs(body: BatchRequest, caller: CallerDependency) -> Response:
        return to_response(await submit_batch(app, caller, _items(body.jobs), policy))

    return router
