"""`/dashboard/overview`: queues, workers and lanes, refreshed live from the event feed."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from backroom.core.feed import FeedFilter
from backroom.dashboard.access import Viewer
from backroom.dashboard.job_pages import stream_response
from backroom.dashboard.web import PREFIX, Dashboard
from backroom.service import event_streams
from backroom.service.overview import overview
from backroom.service.replies import Reply


def overview_router(dashboard: Dashboard) -> APIRouter:
    """The overview, and the event stream that tells it when to refresh."""
    router = APIRouter(include_in_schema=False)

    @router.get(PREFIX)
    async def home() -> Response:
        return RedirectResponse(f"{PREFIX}/overview", status_code=303)

    @router.get(f"{PREFIX}/overview")
    async def overview_page(request: Request) -> Response:
        viewer = await dashboard.viewer_or_login(request)
        if not isinstance(viewer, Viewer):
            return viewer
        tenant = dashboard.tenant_choice(request, viewer)
        summary = await overview(dashboard.app, tenant, admin=viewer.caller.admin)
        return dashboard.page(request, viewer, "overview.html", summary=summary)

    @router.get(f"{PREFIX}/events")
    async def feed(request: Request) -> Response:
        viewer = await dashboard.access.viewer(request)
        if viewer is None:
            return Response(status_code=401)
        stream = event_streams.tenant_events(
            dashboard.app, dashboard.hub, viewer.caller, FeedFilter(), None
        )
        if isinstance(stream, Reply):
            return Response(status_code=stream.status)
        return stream_response(stream)

    return router
