"""API keys: generated once, shown once, stored only as SHA-256 digests.

A key is `br_` followed by 43 URL-safe characters (256 random bits from `secrets`).
The store keeps `hash_api_key(key)`; a request's key is hashed and looked up, so a
leaked database does not leak usable keys. Keys carry so much entropy that a plain
SHA-256 (no salt, no slow hash) is enough: there is nothing to brute-force.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import replace

from backroom.core.errors import BackroomError
from backroom.core.tenant_names import check_tenant_name
from backroom.core.usage import DailyBudget
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.store.protocol import KeyInfo, Tenant
from backroom.store.records import KeyHolder

__all__ = [
    "KEY_PREFIX",
    "KeyHolder",
    "Tenant",
    "TenantExists",
    "UnknownTenant",
    "add_key",
    "caller_for",
    "create_new_tenant",
    "generate_api_key",
    "hash_api_key",
    "issue_key",
    "key_id_of",
    "list_tenants",
    "revoke_keys",
    "session_secret",
    "tenant_for_key_hash",
]

KEY_PREFIX = "br_"
_KEY_BYTES = 32


def generate_api_key() -> str:
    """A new random API key, `br_...`."""
    return KEY_PREFIX + secrets.token_urlsafe(_KEY_BYTES)


def hash_api_key(key: str) -> str:
    """The hex SHA-256 digest under which `key` is stored."""
    return hashlib.sha256(key.encode()).hexdigest()


def key_id_of(key: str) -> str:
    """The short id under which `key` is listed and revoked (a prefix of its hash)."""
    return KeyInfo(hash_api_key(key), 0).key_id


async def issue_key(
    app: AppParts,
    name: str,
    *,
    max_queued: int | None = None,
    admin: bool = False,
    daily_budget: DailyBudget | None = None,
    max_job_cost_pico_usd: int | None = None,
) -> tuple[Tenant, str]:
    """Create tenant `name` (or update its caps) with a new key; return both.

    The key in clear exists only in the return value: print it once, then drop it.
    Raises `InvalidTenantName` for a name outside `TENANT_NAME_PATTERN` or reserved.
    """
    check_tenant_name(name)
    key = generate_api_key()
    tenant = Tenant(
        name=name,
        created_at=app.clock.now(),
        max_queued=max_queued,
        admin=admin,
        daily_budget=daily_budget,
        max_job_cost_pico_usd=max_job_cost_pico_usd,
    )
    stored = await app.store.create_tenant(tenant, hash_api_key(key))
    return stored, key


class TenantExists(BackroomError):
    """`create_new_tenant` was given the name of a tenant that exists already."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"tenant {name!r} exists already: `backroom tenants keys create {name}` adds a key "
            "to it; its settings are left as they are"
        )
        self.name = name


class UnknownTenant(BackroomError):
    """No tenant has this name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no tenant is named {name!r} (`backroom tenants list` shows them)")
        self.name = name


async def create_new_tenant(
    app: AppParts,
    name: str,
    *,
    max_queued: int | None = None,
    admin: bool = False,
    daily_budget: DailyBudget | None = None,
    max_job_cost_pico_usd: int | None = None,
) -> tuple[Tenant, str]:
    """Create tenant `name` with a first key, or raise `TenantExists` (nothing changes)."""
    check_tenant_name(name)
    if await app.store.get_tenant(name) is not None:
        raise TenantExists(name)
    return await issue_key(
        app,
        name,
        max_queued=max_queued,
        admin=admin,
        daily_budget=daily_budget,
        max_job_cost_pico_usd=max_job_cost_pico_usd,
    )


async def add_key(app: AppParts, name: str, *, read_only: bool = False) -> str:
    """A new key for the existing tenant `name`, its settings unchanged (`UnknownTenant`);
    with `read_only`, a key that may look at the tenant's jobs but change nothing."""
    tenant = await app.store.get_tenant(name)
    if tenant is None:
        raise UnknownTenant(name)
    key = generate_api_key()
    # The key is made now; the tenant keeps its own creation time.
    await app.store.create_tenant(
        replace(tenant, created_at=app.clock.now()), hash_api_key(key), read_only
    )
    return key


async def list_tenants(app: AppParts) -> list[Tenant]:
    """Every tenant, with its caps."""
    return await app.store.list_tenants()


async def revoke_keys(app: AppParts, name: str) -> int:
    """Revoke every active key of tenant `name` (its jobs stay); how many were active."""
    return await app.store.revoke_keys(name, app.clock.now())


def caller_for(holder: KeyHolder) -> Caller:
    """The caller a tenant's key makes: its tenant, caps and role."""
    tenant = holder.tenant
    return Caller(
        tenant.name,
        admin=tenant.admin,
        max_queued=tenant.max_queued,
        daily_budget=tenant.daily_budget,
        max_job_cost_pico_usd=tenant.max_job_cost_pico_usd,
        read_only=holder.read_only,
    )


async def tenant_for_key_hash(app: AppParts, key_hash: str) -> KeyHolder | None:
    """The tenant whose active key has this hash (see `hash_api_key`), with the key's
    role, or None."""
    return await app.store.tenant_for_key(key_hash)


async def session_secret(app: AppParts) -> str:
    """The secret that signs dashboard sessions: made once, kept in the store, shared by
    every server on it (so a session survives a restart and works on any of them)."""
    return await app.store.session_secret(secrets.token_urlsafe(_KEY_BYTES))
