"""`/dashboard/jobs`: the filtered list with batch actions, and one job's page with its
live event stream and its own actions."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from fastapi import APIRouter
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from backroom.core.job import JobState
from backroom.dashboard.access import Viewer
from backroom.dashboard.filters import JobsQuery
from backroom.dashboard.web import PREFIX, Dashboard, back_to
from backroom.service import event_streams
from backroom.service.batch import BatchAction, act_on_jobs, matching_ids
from backroom.service.browse import job_detail, job_page
from backroom.service.event_streams import StreamMessage
from backroom.service.replies import Reply

KEEPALIVE_S = 15
MAX_JOB_ID = 2**63 - 1


def _job_id(text: str) -> int | None:
    return int(text) if text.isdigit() and 0 < int(text) <= MAX_JOB_ID else None


def _ids(values: list[str]) -> list[int]:
    return [job_id for value in values if (job_id := _job_id(value)) is not None]


def stream_response(messages: AsyncIterator[StreamMessage]) -> Response:
    """Server-sent events of `messages`, kept alive through proxies."""

    async def frames() -> AsyncIterator[ServerSentEvent]:
        async for message in messages:
            data = json.dumps(message.data, separators=(",", ":"), ensure_ascii=False)
            yield ServerSentEvent(data, event=message.event, id=message.id)

    return EventSourceResponse(frames(), ping=KEEPALIVE_S, headers={"Cache-Control": "no-store"})


class JobPages:
    """The job list (with batch actions) and one job's page, its actions and events."""

    def __init__(self, dashboard: Dashboard) -> None:
        self.dashboard = dashboard
        self.app = dashboard.app

    def router(self) -> APIRouter:
        """The routes of these pages."""
        router = APIRouter(include_in_schema=False)
        router.add_api_route(f"{PREFIX}/jobs", self.jobs, methods=["GET"])
        router.add_api_route(f"{PREFIX}/jobs/batch", self.batch, methods=["POST"])
        router.add_api_route(f"{PREFIX}/jobs/{{job_id}}", self.job, methods=["GET"])
        router.add_api_route(f"{PREFIX}/jobs/{{job_id}}/events", self.events, methods=["GET"])
        router.add_api_route(f"{PREFIX}/jobs/{{job_id}}/{{action}}", self.act, methods=["POST"])
        return router

    async def jobs(self, request: Request) -> Response:
        """The filtered, paged list."""
        viewer = await self.dashboard.viewer_or_login(request)
        if not isinstance(viewer, Viewer):
            return viewer
        query = JobsQuery.parse(request.query_params)
        tenant = self.dashboard.tenant_choice(request, viewer)
        page = await job_page(self.app, viewer.caller, query.job_filter(tenant))
        return self.dashboard.page(
            request, viewer, "jobs.html", query=query, page=page, states=list(JobState)
        )

    async def batch(self, request: Request) -> Response:
        """Cancel or redrive the selected jobs, or every job the filter matches."""
        checked = await self.dashboard.action(request)
        if isinstance(checked, Response):
            return checked
        viewer, form = checked
        query = JobsQuery.parse(QueryParams(form.one("filter") or ""))
        action = form.one("action")
        if action not in set(BatchAction):
            return back_to(f"{PREFIX}/jobs", "choose an action", query.query_string())
        if form.one("scope") == "matching":
            tenant = query.fields.get("tenant") if viewer.caller.admin else None
            ids = await matching_ids(self.app, viewer.caller, query.job_filter(tenant))
        else:
            ids = _ids(form.many("job"))
        report = await act_on_jobs(self.app, viewer.caller, BatchAction(action), ids)
        notice = f"{report.action}: {report.changed} job(s) changed, {report.skipped} skipped"
        return back_to(f"{PREFIX}/jobs", notice, query.query_string())

    async def job(self, request: Request, job_id: str) -> Response:
        """One job's page, or the same 404 for no such job and another tenant's."""
        viewer = await self.dashboard.viewer_or_login(request)
        if not isinstance(viewer, Viewer):
            return viewer
        wanted = _job_id(job_id)
        detail = None if wanted is None else await job_detail(self.app, viewer.caller, wanted)
        if detail is None:
            return self.dashboard.not_found(request, viewer, f"job {job_id}")
        now = self.app.clock.now()
        return self.dashboard.page(request, viewer, "job.html", detail=detail, now=now)

    async def act(self, request: Request, job_id: str, action: str) -> Response:
        """Cancel or redrive one job, then show it again."""
        checked = await self.dashboard.action(request)
        if isinstance(checked, Response):
            return checked
        viewer, _ = checked
        wanted = _job_id(job_id)
        if wanted is None or action not in set(BatchAction):
            return self.dashboard.not_found(request, viewer, f"job {job_id}")
        report = await act_on_jobs(self.app, viewer.caller, BatchAction(action), [wanted])
        done = "done" if report.changed else "not possible in this state"
        if report.action is BatchAction.DELETE and report.changed:
            return back_to(f"{PREFIX}/jobs", f"job {wanted} deleted")
        return back_to(f"{PREFIX}/jobs/{wanted}", f"{action}: {done}")

    async def events(self, request: Request, job_id: str) -> Response:
        """The job's events after the position its page was drawn at, live."""
        viewer = await self.dashboard.access.viewer(request)
        wanted = _job_id(job_id)
        after = event_streams.parse_position(
            request.headers.get("Last-Event-ID") or request.query_params.get("after"), "after"
        )
        if viewer is None or wanted is None or isinstance(after, Reply):
            return Response(status_code=404)
        stream = await event_streams.job_events(
            self.app, self.dashboard.hub, viewer.caller, wanted, after
        )
        if isinstance(stream, Reply):
            return Response(status_code=stream.status)
        return stream_response(stream)
