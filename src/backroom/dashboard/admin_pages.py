"""`/dashboard/tenants` (admin): every tenant's caps, keys and spend; change its caps and
budgets (`service.tenant_edit`, the operation of `backroom tenants update` and of
`PATCH /v1/tenants/{name}`); make and revoke keys.

A new key is shown once, in the page that answers the form (never in a URL or a log).
For anyone but an admin the page does not exist (404).
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from backroom.core.errors import BackroomError
from backroom.dashboard.access import Viewer
from backroom.dashboard.web import PREFIX, Dashboard, Form, back_to
from backroom.service.api_keys import add_key
from backroom.service.tenant_admin import revoke_key
from backroom.service.tenant_edit import FormError, caps_from_form, edit_tenant
from backroom.service.tenant_view import tenant_views


class TenantPages:
    """The tenants page and its key actions."""

    def __init__(self, dashboard: Dashboard) -> None:
        self.dashboard = dashboard
        self.app = dashboard.app

    def router(self) -> APIRouter:
        """The routes of these pages."""
        router = APIRouter(include_in_schema=False)
        router.add_api_route(f"{PREFIX}/tenants", self.tenants, methods=["GET"])
        router.add_api_route(f"{PREFIX}/tenants/{{name}}/keys", self.create_key, methods=["POST"])
        router.add_api_route(f"{PREFIX}/tenants/{{name}}/caps", self.edit_caps, methods=["POST"])
        router.add_api_route(
            f"{PREFIX}/tenants/{{name}}/keys/{{key_id}}/revoke", self.revoke, methods=["POST"]
        )
        return router

    async def _page(
        self, request: Request, viewer: Viewer, new_key: tuple[str, str] | None = None
    ) -> Response:
        views = await tenant_views(self.app)
        return self.dashboard.page(request, viewer, "tenants.html", views=views, new_key=new_key)

    async def tenants(self, request: Request) -> Response:
        """Every tenant (admin only)."""
        viewer = await self.dashboard.viewer_or_login(request)
        if not isinstance(viewer, Viewer):
            return viewer
        if not viewer.caller.admin:
            return self.dashboard.not_found(request, viewer, "page /dashboard/tenants")
        return await self._page(request, viewer)

    async def _admin_action(self, request: Request) -> tuple[Viewer, Form] | Response:
        """The admin's checked form, or the refusal (the same 404 as the page's)."""
        checked = await self.dashboard.action(request)
        if isinstance(checked, Response) or checked[0].caller.admin:
            return checked
        return self.dashboard.not_found(request, checked[0], "page /dashboard/tenants")

    async def create_key(self, request: Request, name: str) -> Response:
        """A new key for tenant `name`, shown once in the answer."""
        checked = await self._admin_action(request)
        if isinstance(checked, Response):
            return checked
        viewer, form = checked
        try:
            key = await add_key(self.app, name, read_only=form.one("read_only") == "on")
        except BackroomError as error:
            return back_to(f"{PREFIX}/tenants", str(error))
        return await self._page(request, viewer, new_key=(name, key))

    async def revoke(self, request: Request, name: str, key_id: str) -> Response:
        """Revoke one key of tenant `name` by its id."""
        checked = await self._admin_action(request)
        if isinstance(checked, Response):
            return checked
        try:
            revoked = await revoke_key(self.app, name, key_id)
        except BackroomError as error:
            return back_to(f"{PREFIX}/tenants", str(error))
        return back_to(f"{PREFIX}/tenants", f"revoked key {revoked.key_id} of tenant {name}")

    async def edit_caps(self, request: Request, name: str) -> Response:
        """Set tenant `name`'s caps and budgets to the form's (an empty field: no cap)."""
        checked = await self._admin_action(request)
        if isinstance(checked, Response):
            return checked
        viewer, form = checked
        try:
            change = caps_from_form(
                form.one("max_queued"), form.one("daily_budget_usd"), form.one("max_job_cost_usd")
            )
        except FormError as error:
            return back_to(f"{PREFIX}/tenants", str(error))
        reply = await edit_tenant(self.app, viewer.caller, name, change)
        notice = reply.detail if reply.is_problem else f"saved the caps of tenant {name}"
        return back_to(f"{PREFIX}/tenants", notice)
