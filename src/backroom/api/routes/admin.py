"""`/v1/workers` and `/v1/tenants/{name}`: the worker processes and what they run, and
a tenant's caps and budgets (admin)."""

# No `from __future__ import annotations`: FastAPI must see the route signatures'
# local `CallerDependency` alias as a real type, not as a string it cannot resolve.
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Response

from backroom.api.auth import Authenticator
from backroom.api.models.admin import TenantCapsChange, TenantDocument, WorkerList
from backroom.api.responses import problem_responses, to_response
from backroom.app import App
from backroom.service import workers
from backroom.service.callers import Caller
from backroom.service.tenant_admin import KEEP
from backroom.service.tenant_edit import CapsChange, edit_tenant


def _caps_change(body: TenantCapsChange) -> CapsChange:
    """The body's change: a field it leaves out is kept, a null one removed."""
    given = body.model_fields_set
    return CapsChange(
        body.max_queued if "max_queued" in given else KEEP,
        body.daily_budget_usd if "daily_budget_usd" in given else KEEP,
        body.max_job_cost_usd if "max_job_cost_usd" in given else KEEP,
    )


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

    @router.patch(
        "/tenants/{name}",
        response_model=TenantDocument,
        summary="Change a tenant's caps and budgets; fields left out stay (admin)",
        responses=problem_responses(401, 403, 404, 422),
    )
    async def update_tenant(
        caller: CallerDependency,
        name: Annotated[str, Path(description="The tenant's name.")],
        body: TenantCapsChange,
    ) -> Response:
        return to_response(await edit_tenant(app, caller, name, _caps_change(body)))

    return router
