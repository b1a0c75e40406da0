"""`/dashboard/dead-letters`: failed jobs grouped by task and error class; redrive one job,
a selection (through the jobs page's batch form) or a whole group."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from backroom.core.job import JobState
from backroom.dashboard.access import Viewer
from backroom.dashboard.filters import JobsQuery
from backroom.dashboard.web import PREFIX, Dashboard, back_to
from backroom.service.batch import BatchAction, act_on_jobs, group_ids
from backroom.service.browse import JobFilter, dead_letter_groups, job_page

NEWEST_SHOWN = 50


class DeadLetterPages:
    """The dead letters page and its group redrive."""

    def __init__(self, dashboard: Dashboard) -> None:
        self.dashboard = dashboard
        self.app = dashboard.app

    def router(self) -> APIRouter:
        """The routes of these pages."""
        router = APIRouter(include_in_schema=False)
        router.add_api_route(f"{PREFIX}/dead-letters", self.dead_letters, methods=["GET"])
        router.add_api_route(f"{PREFIX}/dead-letters/redrive", self.redrive, methods=["POST"])
        return router

    async def dead_letters(self, request: Request) -> Response:
        """The groups, and the newest failed jobs."""
        viewer = await self.dashboard.viewer_or_login(request)
        if not isinstance(viewer, Viewer):
            return viewer
        tenant = self.dashboard.tenant_choice(request, viewer)
        groups = await dead_letter_groups(self.app, viewer.caller, tenant)
        where = JobFilter(tenant, (JobState.FAILED,), limit=NEWEST_SHOWN)
        newest = await job_page(self.app, viewer.caller, where)
        failed_query = JobsQuery((JobState.FAILED,), {"tenant": tenant} if tenant else {}, None)
        return self.dashboard.page(
            request,
            viewer,
            "dead_letters.html",
            groups=groups,
            newest=newest,
            query=failed_query,
            group_link=_group_link,
        )

    async def redrive(self, request: Request) -> Response:
        """Redrive every failed job of one task and error class."""
        checked = await self.dashboard.action(request)
        if isinstance(checked, Response):
            return checked
        viewer, form = checked
        task = form.one("task")
        if task is None:
            return back_to(f"{PREFIX}/dead-letters", "choose a group")
        tenant = form.one("tenant") if viewer.caller.admin else None
        ids = await group_ids(self.app, viewer.caller, tenant, task, form.one("error_kind"))
        report = await act_on_jobs(self.app, viewer.caller, BatchAction.REDRIVE, ids)
        notice = f"redrive: {report.changed} job(s) of {task} sent back to the queue"
        return back_to(f"{PREFIX}/dead-letters", notice, urlencode({"tenant": tenant or ""}))


def _group_link(task: str, tenant: str | None) -> str:
    """The jobs page filtered to one group's task, failed only."""
    fields = {"task": task} | ({"tenant": tenant} if tenant else {})
    return f"{PREFIX}/jobs?{JobsQuery((JobState.FAILED,), fields, None).query_string()}"
