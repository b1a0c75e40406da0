"""`/dashboard/queues`: every queue and lane with its pause; an admin pauses and resumes
them for every worker (through `service.queues`, which refuses anyone else)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from backroom.dashboard.access import Viewer
from backroom.dashboard.web import PREFIX, Dashboard, back_to
from backroom.service import queues
from backroom.service.overview import overview

_STEER = {
    ("queue", "pause"): queues.pause_queue,
    ("queue", "resume"): queues.resume_queue,
    ("lane", "pause"): queues.pause_lane,
    ("lane", "resume"): queues.resume_lane,
}


class QueuePages:
    """The queues page and its pause and resume buttons."""

    def __init__(self, dashboard: Dashboard) -> None:
        self.dashboard = dashboard
        self.app = dashboard.app

    def router(self) -> APIRouter:
        """The routes of these pages."""
        router = APIRouter(include_in_schema=False)
        router.add_api_route(f"{PREFIX}/queues", self.queues, methods=["GET"])
        router.add_api_route(f"{PREFIX}/queues/steer", self.steer, methods=["POST"])
        return router

    async def queues(self, request: Request) -> Response:
        """Queues with their depth and pause; lanes with their use and pauses (admin)."""
        viewer = await self.dashboard.viewer_or_login(request)
        if not isinstance(viewer, Viewer):
            return viewer
        tenant = self.dashboard.tenant_choice(request, viewer)
        summary = await overview(self.app, tenant, admin=False)
        lanes = await queues.lane_documents(self.app) if viewer.caller.admin else None
        return self.dashboard.page(request, viewer, "queues.html", summary=summary, lanes=lanes)

    async def steer(self, request: Request) -> Response:
        """Pause or resume one queue or lane."""
        checked = await self.dashboard.action(request)
        if isinstance(checked, Response):
            return checked
        viewer, form = checked
        steer = _STEER.get((form.one("kind") or "", form.one("action") or ""))
        name = form.one("name")
        if steer is None or name is None:
            return back_to(f"{PREFIX}/queues", "choose a queue or lane and pause or resume")
        reply = await steer(self.app, viewer.caller, name)
        if reply.is_problem:
            return self.dashboard.page(
                request, viewer, "refused.html", reply.status, why=reply.detail
            )
        done = "paused" if form.one("action") == "pause" else "resumed"
        return back_to(f"{PREFIX}/queues", f"{form.one('kind')} {name} {done}")
