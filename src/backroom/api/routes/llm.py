"""`/v1/lanes` and `/v1/usage`: the shared lanes (admin), and LLM usage and cost."""

# No `from __future__ import annotations`: FastAPI must see the route signatures'
# local `CallerDependency` alias as a real type, not as a string it cannot resolve.
from datetime import UTC, datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Header, Query, Response

from backroom.api.auth import Authenticator
from backroom.api.models.llm import LaneList, UsageReport
from backroom.api.responses import problem_responses, to_response
from backroom.app import App
from backroom.service import queues
from backroom.service import usage as service_usage
from backroom.service.callers import Caller
from backroom.service.usage import CSV_MEDIA_TYPE, DEFAULT_GROUP_BY, UsageRange

_GROUP_BY_HELP = (
    "Comma-separated dimensions, in the order the groups show them: tenant, provider, "
    "model, prompt_version, day (UTC) and metadata.KEY (a key of the jobs' metadata)."
)
_CSV_RESPONSE = {"content": {"text/csv": {"schema": {"type": "string"}}}}


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
        summary="LLM tokens and cost, grouped by provider, model, day, tenant, metadata...",
        responses={200: _CSV_RESPONSE, **problem_responses(401, 422)},
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
        group_by: Annotated[str, Query(description=_GROUP_BY_HELP)] = DEFAULT_GROUP_BY,
        format: Annotated[
            Literal["json", "csv"] | None,
            Query(description="csv: the groups as CSV (as `Accept: text/csv` asks)."),
        ] = None,
        accept: Annotated[str | None, Header(include_in_schema=False)] = None,
    ) -> Response:
        asked = UsageRange(
            None if since is None else _epoch_ms(since),
            None if until is None else _epoch_ms(until),
            group_by,
        )
        reply = await service_usage.usage_report(app, caller, asked)
        wants_csv = format == "csv" or (format is None and "text/csv" in (accept or ""))
        if wants_csv and not reply.is_problem:
            return Response(service_usage.usage_csv(reply.body), media_type=CSV_MEDIA_TYPE)
        return to_response(reply)

    return router
