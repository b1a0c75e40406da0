"""Who is looking at the dashboard: a session cookie turned into a `Caller`.

Logging in takes an API key (a tenant's, or the settings' admin key); the session
keeps only the key's digest, and each request looks it up again, so a revoked key
ends its sessions at once. An admin sees every tenant and may narrow the pages to one.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from starlette.requests import Request

from backroom.app import App
from backroom.core.tenant_names import ADMIN_IDENTITY
from backroom.dashboard.session import SESSION_COOKIE, Session, SessionSigner
from backroom.service.api_keys import caller_for, hash_api_key, session_secret, tenant_for_key_hash
from backroom.service.callers import Caller


@dataclass(frozen=True, slots=True)
class Viewer:
    """A logged-in person: who they are to the service, and their form token."""

    caller: Caller
    csrf: str

    @property
    def may_act(self) -> bool:
        """False for a read-only key: its pages show no buttons that change anything."""
        return not self.caller.read_only


class DashboardAccess:
    """Logs people in and recognises their sessions, for one app."""

    def __init__(self, app: App, admin_key: str | None, secret: str | None) -> None:
        self._app = app
        self._admin_hash = None if admin_key is None else hash_api_key(admin_key)
        self._secret = secret
        self._signer: SessionSigner | None = None

    async def signer(self) -> SessionSigner:
        """The signer under the configured secret, or the one kept in the store."""
        if self._signer is None:
            secret = self._secret or await session_secret(self._app)
            self._signer = SessionSigner(secret)
        return self._signer

    async def caller_of(self, key_hash: str) -> Caller | None:
        """The caller a key digest stands for now, or None (unknown or revoked)."""
        if self._admin_hash is not None and hmac.compare_digest(key_hash, self._admin_hash):
            return Caller(ADMIN_IDENTITY, admin=True)
        holder = await tenant_for_key_hash(self._app, key_hash)
        return None if holder is None else caller_for(holder)

    async def login(self, key: str) -> str | None:
        """The session cookie for a valid key, or None."""
        digest = hash_api_key(key.strip())
        if await self.caller_of(digest) is None:
            return None
        signer = await self.signer()
        return signer.cookie(Session(digest, self._app.clock.now()))

    async def viewer(self, request: Request) -> Viewer | None:
        """The person whose session cookie `request` carries, or None."""
        cookie = request.cookies.get(SESSION_COOKIE)
        signer = await self.signer()
        session = signer.session(cookie, self._app.clock.now())
        if cookie is None or session is None:
            return None
        caller = await self.caller_of(session.key_hash)
        return None if caller is None else Viewer(caller, signer.csrf_token(cookie))

    async def csrf_ok(self, request: Request, token: str | None) -> bool:
        """Whether a form's token belongs to the session `request` carries."""
        signer = await self.signer()
        return signer.csrf_ok(request.cookies.get(SESSION_COOKIE), token)
