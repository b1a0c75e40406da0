"""Who is calling: `Authorization: Bearer KEY`, turned into a `Caller`.

A key is either the admin key of the settings (BACKROOM_ADMIN_KEY, compared in
constant time) or a tenant's key, looked up by its SHA-256 hash (and remembered for
a moment, see `key_cache`). Anything else, or no key at all, is a 401. A read-only
key may only read: any other method is a 403.
"""

# No `from __future__ import annotations`: FastAPI reads the signature of the
# dependency, which names the closure-local `bearer`, at run time.
import hmac
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.security.utils import get_authorization_scheme_param

from backroom.api.key_cache import TenantCache
from backroom.api.problems import ProblemError
from backroom.app import App
from backroom.core.tenant_names import ADMIN_IDENTITY
from backroom.service.api_keys import caller_for, hash_api_key, tenant_for_key_hash
from backroom.service.callers import Caller, refuse_read_only
from backroom.service.replies import problem

ADMIN_TENANT = ADMIN_IDENTITY
"""The tenant that jobs submitted with the settings' admin key belong to: `@admin`,
a name no tenant can have, so a tenant called anything cannot see them as its own."""

Authenticator = Callable[..., Awaitable[Caller]]
_READS = frozenset({"GET", "HEAD", "OPTIONS"})


def _unauthorized(detail: str) -> ProblemError:
    return ProblemError(problem(401, detail, headers={"WWW-Authenticate": "Bearer"}))


def bearer_key(authorization: str | None) -> str | None:
    """The key of an `Authorization: Bearer KEY` header value; None for anything else
    (what FastAPI's `HTTPBearer` accepts, for routes that read the header themselves)."""
    scheme, credentials = get_authorization_scheme_param(authorization)
    if not credentials or scheme.lower() != "bearer":
        return None
    return credentials


class CallerLookup:
    """Who holds an API key: the settings' admin key, or a tenant's key (its tenant
    remembered for `key_cache_ms`, see `key_cache`). Shared by the `authenticator`
    dependency and `POST /v1/jobs` (which reads its headers itself), so both see one
    cache and a revoked key stops working in both at once."""

    def __init__(self, app: App, admin_key: str | None, key_cache_ms: int) -> None:
        self._app = app
        self._admin_key = None if admin_key is None else admin_key.encode()
        self._cache = TenantCache(app.clock, key_cache_ms)

    async def caller(self, key: str) -> Caller | None:
        """The caller `key` belongs to; None for a key unknown or revoked."""
        if self._admin_key is not None and hmac.compare_digest(key.encode(), self._admin_key):
            return Caller(ADMIN_TENANT, admin=True)
        digest = hash_api_key(key)
        holder = self._cache.get(digest)
        if holder is None:
            holder = await tenant_for_key_hash(self._app, digest)
            if holder is None:
                return None
            # Remembered only when the store answered: a hit must not extend its own
            # life, or a key in steady use would outlive its revocation for ever.
            self._cache.put(digest, holder)
        return caller_for(holder)

    async def admit(self, key: str | None, method: str) -> Caller:
        """The caller of a request with `key` (None: no bearer key) and `method`;
        `ProblemError` with the 401 (no key, unknown or revoked) or 403 (a read-only
        key asked to write) it earns."""
        if key is None:
            raise _unauthorized("send an API key: Authorization: Bearer KEY")
        caller = await self.caller(key)
        if caller is None:
            raise _unauthorized("the API key is unknown or revoked")
        refused = None if method in _READS else refuse_read_only(caller)
        if refused is not None:
            raise ProblemError(refused)
        return caller


def authenticator(lookup: CallerLookup) -> Authenticator:
    """A FastAPI dependency that answers the caller of a request, or raises a 401."""
    bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer br_...`")

    async def authenticate(
        request: Request,
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> Caller:
        key = None if credentials is None else credentials.credentials
        return await lookup.admit(key, request.method)

    return authenticate
