"""What every dashboard page shares: the viewer, forms with their CSRF check, the
tenant an admin narrowed the pages to, and rendering."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode

from jinja2 import Environment
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from backroom.app import App
from backroom.dashboard.access import DashboardAccess, Viewer
from backroom.dashboard.render import html
from backroom.service.callers import refuse_read_only
from backroom.service.feed_hub import FeedHub

PREFIX = "/dashboard"
MAX_FORM_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class Form:
    """A submitted form's fields (each may repeat: checkboxes)."""

    fields: dict[str, list[str]]

    def one(self, name: str) -> str | None:
        """The field's first value, or None (also when empty)."""
        values = self.fields.get(name) or [""]
        return values[0].strip() or None

    def many(self, name: str) -> list[str]:
        """Every value of the field."""
        return self.fields.get(name, [])


class Dashboard:
    """The app, its sessions, its templates and its event hub, for the page routes."""

    def __init__(
        self, app: App, access: DashboardAccess, environment: Environment, hub: FeedHub
    ) -> None:
        self.app = app
        self.access = access
        self.environment = environment
        self.hub = hub

    def page(
        self, request: Request, viewer: Viewer, name: str, status: int = 200, **context: Any
    ) -> HTMLResponse:
        """Template `name` for `viewer`, with what the layout needs."""
        return html(
            self.environment,
            name,
            status,
            viewer=viewer,
            tenant=self.tenant_choice(request, viewer),
            path=request.url.path,
            notice=request.query_params.get("notice"),
            **context,
        )

    def not_found(self, request: Request, viewer: Viewer, what: str) -> HTMLResponse:
        """The 404 page: used alike for what does not exist and what is another tenant's."""
        return self.page(request, viewer, "not_found.html", 404, what=what)

    @staticmethod
    def tenant_choice(request: Request, viewer: Viewer) -> str | None:
        """The tenant whose jobs the pages show: the viewer's own, or for an admin the one
        chosen with `?tenant=` (None: every tenant)."""
        if not viewer.caller.admin:
            return viewer.caller.tenant
        return request.query_params.get("tenant") or None

    async def viewer_or_login(self, request: Request) -> Viewer | Response:
        """The logged-in viewer, or a redirect to the login page that comes back here."""
        viewer = await self.access.viewer(request)
        if viewer is not None:
            return viewer
        back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"{PREFIX}/login?{urlencode({'next': back})}", status_code=303)

    async def action(
        self, request: Request, changes: bool = True
    ) -> tuple[Viewer, Form] | Response:
        """The viewer and form of a POST, or the refusal: a login redirect, a 403 for a
        bad CSRF token, a 403 for a read-only key when the POST `changes` something."""
        viewer = await self.viewer_or_login(request)
        if not isinstance(viewer, Viewer):
            return viewer
        form = await read_form(request)
        if not await self.access.csrf_ok(request, form.one("csrf")):
            return self.page(request, viewer, "refused.html", 403, why="the form expired")
        refused = refuse_read_only(viewer.caller) if changes else None
        if refused is not None:
            return self.page(request, viewer, "refused.html", 403, why=refused.detail)
        return viewer, form


async def read_form(request: Request) -> Form:
    """The request's URL-encoded form (no multipart: the dashboard uploads nothing)."""
    body = await request.body()
    text = body[:MAX_FORM_BYTES].decode("utf-8", errors="replace")
    return Form(parse_qs(text, keep_blank_values=True))


def back_to(path: str, notice: str, query: str = "") -> RedirectResponse:
    """A redirect (after a POST) to `path` with `query`, telling the page what happened."""
    told = urlencode({"notice": notice})
    return RedirectResponse(f"{path}?{query + '&' if query else ''}{told}", status_code=303)
