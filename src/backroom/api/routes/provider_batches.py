"""`/v1/batches`: the open provider batches of offloaded jobs (admin)."""

# No `from __future__ import annotations`: FastAPI must see the route signatures'
# local `CallerDependency` alias as a real type, not as a string it cannot resolve.
from typing import Annotated

from fastapi import APIRouter, Depends, Response

from backroom.api.auth import Authenticator
from backroom.api.models.provider_batches import ProviderBatchList
from backroom.api.responses import problem_responses, to_response
from backroom.app import App
from backroom.service import provider_batches
from backroom.service.callers import Caller


def provider_batches_router(app: App, authenticate: Authenticator) -> APIRouter:
    """The provider batch route of `app`, for callers `authenticate` admits."""
    router = APIRouter(prefix="/v1", tags=["llm"])
    CallerDependency = Annotated[Caller, Depends(authenticate)]

    @router.get(
        "/batches",
        response_model=ProviderBatchList,
        summary="Open provider batches of offloaded jobs, with their counts (admin)",
        responses=problem_responses(401, 403),
    )
    async def list_batches(caller: CallerDependency) -> Response:
        return to_response(await provider_batches.list_provider_batches(app, caller))

    return router
