"""`/dashboard/login` and `/dashboard/logout`: an API key in, a session cookie out.

The login form carries its own CSRF token, bound to a random nonce cookie, so another
site cannot log a visitor in under the other site's key (login CSRF).
"""

from __future__ import annotations

import secrets

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from backroom.dashboard.render import html
from backroom.dashboard.session import LOGIN_COOKIE, SESSION_COOKIE, SESSION_MS
from backroom.dashboard.web import PREFIX, Dashboard, read_form


def _safe_next(target: str | None) -> str:
    """Where to go after login: a dashboard path only (never another site)."""
    if target and target.startswith(f"{PREFIX}/") and not target.startswith("//"):
        return target
    return f"{PREFIX}/overview"


class LoginPages:
    """The login form, logging in, and logging out."""

    def __init__(self, dashboard: Dashboard) -> None:
        self.dashboard = dashboard

    def router(self) -> APIRouter:
        """The routes of these pages."""
        router = APIRouter(include_in_schema=False)
        router.add_api_route(f"{PREFIX}/login", self.login_page, methods=["GET"])
        router.add_api_route(f"{PREFIX}/login", self.login, methods=["POST"])
        router.add_api_route(f"{PREFIX}/logout", self.logout, methods=["POST"])
        return router

    async def _form(
        self, request: Request, status: int = 200, error: str | None = None
    ) -> Response:
        nonce = secrets.token_urlsafe(24)
        signer = await self.dashboard.access.signer()
        response = html(
            self.dashboard.environment,
            "login.html",
            status,
            csrf=signer.csrf_token(nonce),
            next=_safe_next(request.query_params.get("next")),
            error=error,
        )
        response.set_cookie(
            LOGIN_COOKIE, nonce, max_age=3600, httponly=True, samesite="strict", path=PREFIX
        )
        return response

    async def login_page(self, request: Request) -> Response:
        """The login form."""
        return await self._form(request)

    async def login(self, request: Request) -> Response:
        """A session cookie for a valid key, then the page the person was going to."""
        fields = await read_form(request)
        signer = await self.dashboard.access.signer()
        if not signer.csrf_ok(request.cookies.get(LOGIN_COOKIE), fields.one("csrf")):
            return await self._form(request, 403, "The login form expired: try again.")
        cookie = await self.dashboard.access.login(fields.one("api_key") or "")
        if cookie is None:
            return await self._form(request, 401, "That API key is unknown or revoked.")
        response = RedirectResponse(_safe_next(fields.one("next")), status_code=303)
        response.set_cookie(
            SESSION_COOKIE,
            cookie,
            max_age=SESSION_MS // 1000,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path=PREFIX,
        )
        response.delete_cookie(LOGIN_COOKIE, path=PREFIX)
        return response

    async def logout(self, request: Request) -> Response:
        """End the session (a read-only key may log out too)."""
        checked = await self.dashboard.action(request, changes=False)
        if isinstance(checked, Response):
            return checked
        response = RedirectResponse(f"{PREFIX}/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path=PREFIX)
        return response
