"""`/v1/lanes` and `/v1/usage`: the shared lanes (admin), and LLM usage and cost."""

# No `from __future__ import annotations`: FastAPI must see the route signatures'
# local `CallerDependency` alias as a real type, not as a string it cannot resolve.
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from backroom.api.auth import Authenticator
from backroom.api.models.llm import LaneList, UsageReport
from backroom.api.responses import problem_responses, to_response
from backroom.app import App
from backroom.service import llm as service_llm
from backroom.service import queues
from backroom.service.callers import Caller
from backroom.service.llm import UsageGrouping, UsageRange


def _epoch_ms(moment: datetime) -> int:
    """A query's time in ms since the epoch; one without a zone is UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def llm_router(app: App, authenticate: Authenticator) -> APIRouter:
    """The lane and usage routes of `app`, for callers `authenticate` admits."""
    router = APIRouter(prefix="/v1", tags=["llm"])
    CallerDependency = Annotated[Caller, Depends(authenticate)]

    @router.get(
        "/lanes",
        response_model=LaneList,
        summary="The lanes: limits, calls in flight, what is left, pauses (admin)",
        responses=problem_responses(401, 403),
    )
    async def list_lanes(caller: CallerDependency) -> Response:
        return to_response(await queues.list_lanes(app, caller))

    @router.get(
        "/usage",
        response_model=UsageReport,
        summary="LLM tokens and cost, by model or by day",
        responses=problem_responses(401, 422),
    )
    async def usage(
        caller: CallerDependency,
        since: Annotated[
            datetime | None,
            Query(alias="from", description="ISO 8601 time or date (UTC); default: today."),
        ] = None,
        until: Annotated[
            datetime | None,
            Query(alias="to", description="Excluded; default: the end of today (UTC)."),
        ] = None,
        group_by: Annotated[UsageGrouping, Query(description="Sum per model or day.")] = (
            UsageGrouping.MODEL
        ),
    ) -> Response:
        asked = UsageRange(
            None if since is None else _epoch_ms(since),
            None if until is None else _epoch_ms(until),
            group_by,
        )
        return to_response(await service_llm.usage_report(app, caller, asked))

    return router
