"""The web dashboard at `/dashboard`: server-rendered pages over `backroom.service`.

Jinja2 templates, one stylesheet and one small script, all served from this package
(it works offline); no build step. People log in with an API key; the session is an
HTTP-only, SameSite=Strict cookie, every form that changes something carries a CSRF
token, a tenant sees only its own jobs, and a read-only key sees but cannot act.
"""

from __future__ import annotations

from importlib import resources

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

from backroom.app import App
from backroom.dashboard.access import DashboardAccess
from backroom.dashboard.admin_pages import TenantPages
from backroom.dashboard.dead_letter_pages import DeadLetterPages
from backroom.dashboard.job_pages import JobPages
from backroom.dashboard.login import LoginPages
from backroom.dashboard.overview_pages import overview_router
from backroom.dashboard.queue_pages import QueuePages
from backroom.dashboard.render import templates
from backroom.dashboard.web import PREFIX, Dashboard
from backroom.service.feed_hub import FeedHub

__all__ = ["install_dashboard"]


def install_dashboard(
    api: FastAPI, app: App, hub: FeedHub, admin_key: str | None, secret: str | None
) -> None:
    """Serve the dashboard of `app` from `api`, its live pages fed by `hub`."""
    dashboard = Dashboard(app, DashboardAccess(app, admin_key, secret), templates(), hub)
    static = resources.files("backroom.dashboard") / "static"
    api.mount(f"{PREFIX}/static", StaticFiles(directory=str(static)), name="dashboard-static")
    api.include_router(LoginPages(dashboard).router())
    api.include_router(overview_router(dashboard))
    api.include_router(JobPages(dashboard).router())
    api.include_router(DeadLetterPages(dashboard).router())
    api.include_router(TenantPages(dashboard).router())
    api.include_router(QueuePages(dashboard).router())
