"""`/v1/workers`: the worker processes and what they run (admin)."""

# No `from __future__ import annotations`: FastAPI must see the route signatures'
# local `CallerDependency` alias as a real type, not as a string it cannot resolve.
from typing import Annotated

from fastapi import APIRouter, Depends, Response

from backroom.api.auth import Authenticator
from backroom.api.models.admin import WorkerList
from backroom.api.responses import problem_responses, to_response
from backroom.app import App
from backroom.service import workers
from backroom.service.callers import Caller


def admin_router(app: App, authenticate: Authenticator) -> APIRouter:
    """The admin's routes over every tenant's infrastructure."""
    router = APIRouter(prefix="/v1", tags=["admin"])
    CallerDependency = Annotated[Caller, Depends(authenticate)]

    @router.get(
        "/workers",
        response_model=WorkerList,
        summary="The workers: alive, lost or stopped, with the jobs each runs (admin)",
        responses=problem_responses(401, 403),
    )
    async def list_workers(caller: CallerDependency) -> Response:
        return to_response(await workers.list_workers(app, caller))

    return router
