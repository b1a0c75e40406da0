"""Tenants and their API keys in memory (keys arrive already hashed)."""

from __future__ import annotations

import dataclasses

from backroom.core.errors import StoreError
from backroom.core.usage import DailyBudget
from backroom.store.memory.part import MemoryPart
from backroom.store.memory.tables import KeyRow, MemoryTables
from backroom.store.protocol import KeyInfo, Tenant
from backroom.store.records import KeyHolder


def _create_tenant(tables: MemoryTables, tenant: Tenant, key_hash: str, read_only: bool) -> Tenant:
    """Insert the tenant, or update its caps if it exists, and add the key to it.

    A key stored already is refused, as the SQL stores' primary key refuses it, and
    then nothing changes.
    """
    if key_hash in tables.api_keys:
        raise StoreError("memory store: that API key is stored already")
    # The key is made now; the tenant keeps the time it was first made, as in SQL.
    key = KeyRow(tenant.name, tenant.created_at, read_only=read_only)
    known = tables.tenants.get(tenant.name)
    if known is not None:
        tenant = dataclasses.replace(
            known,
            max_queued=tenant.max_queued,
            admin=tenant.admin,
            daily_budget=tenant.daily_budget,
            max_job_cost_pico_usd=tenant.max_job_cost_pico_usd,
        )
    tables.tenants[tenant.name] = tenant
    tables.api_keys[key_hash] = key
    return tenant


def _tenant_for_key(tables: MemoryTables, key_hash: str) -> KeyHolder | None:
    """The tenant an unrevoked key belongs to, with the key's role, or None."""
    key = tables.api_keys.get(key_hash)
    if key is None or key.revoked_at is not None:
        return None
    return KeyHolder(tables.tenants[key.tenant], key.read_only)


def _list_tenants(tables: MemoryTables) -> list[Tenant]:
    """Every tenant, by name."""
    return [tables.tenants[name] for name in sorted(tables.tenants)]


def _revoke_keys(tables: MemoryTables, tenant: str, now: int) -> int:
    """Revoke every unrevoked key of the tenant; how many were revoked."""
    revoked = 0
    for key in tables.api_keys.values():
        if key.tenant == tenant and key.revoked_at is None:
            key.revoked_at = now
            revoked += 1
    return revoked


def _update_tenant(
    tables: MemoryTables, name: str, caps: tuple[int | None, DailyBudget | None, int | None]
) -> Tenant | None:
    """Set the tenant's caps (max queued, daily budget, max job cost); the tenant, or None."""
    known = tables.tenants.get(name)
    if known is None:
        return None
    max_queued, budget, max_job_cost = caps
    tenant = dataclasses.replace(
        known, max_queued=max_queued, daily_budget=budget, max_job_cost_pico_usd=max_job_cost
    )
    tables.tenants[name] = tenant
    return tenant


def _list_keys(tables: MemoryTables, tenant: str) -> list[KeyInfo]:
    """Every key of the tenant, oldest first."""
    keys = [
        KeyInfo(key_hash, key.created_at, key.revoked_at, key.read_only)
        for key_hash, key in tables.api_keys.items()
        if key.tenant == tenant
    ]
    return sorted(keys, key=lambda info: (info.created_at, info.key_hash))


def _revoke_key(tables: MemoryTables, tenant: str, prefix: str, now: int) -> bool:
    """Revoke the tenant's one unrevoked key the prefix names (see `TenantStore.revoke_key`)."""
    matches = [
        key
        for key_hash, key in tables.api_keys.items()
        if key.tenant == tenant and key_hash.startswith(prefix)
    ]
    if len(matches) != 1 or matches[0].revoked_at is not None:
        return False
    matches[0].revoked_at = now
    return True


class MemoryTenants(MemoryPart):
    """Tenants and their API keys (see `TenantStore`)."""

    async def create_tenant(self, tenant: Tenant, key_hash: str, read_only: bool = False) -> Tenant:
        """Create `tenant` (or update its caps if it exists) and add the key to it."""
        return _create_tenant(self._tables, tenant, key_hash, read_only)

    async def update_tenant(
        self,
        name: str,
        max_queued: int | None,
        daily_budget: DailyBudget | None,
        max_job_cost_pico_usd: int | None,
    ) -> Tenant | None:
        """Set the caps of tenant `name`; the tenant, or None if unknown."""
        caps = (max_queued, daily_budget, max_job_cost_pico_usd)
        return _update_tenant(self._tables, name, caps)

    async def tenant_for_key(self, key_hash: str) -> KeyHolder | None:
        """The tenant an unrevoked key belongs to, with the key's role, or None."""
        return _tenant_for_key(self._tables, key_hash)

    async def get_tenant(self, name: str) -> Tenant | None:
        """The tenant called `name`, or None."""
        return self._tables.tenants.get(name)

    async def list_tenants(self) -> list[Tenant]:
        """Every tenant, by name."""
        return _list_tenants(self._tables)

    async def revoke_keys(self, tenant: str, now: int) -> int:
        """Revoke every key of the tenant; how many were revoked."""
        return _revoke_keys(self._tables, tenant, now)

    async def list_keys(self, tenant: str) -> list[KeyInfo]:
        """Every key of the tenant, revoked or not, oldest first."""
        return _list_keys(self._tables, tenant)

    async def revoke_key(self, tenant: str, key_id_prefix: str, now: int) -> bool:
        """Revoke the tenant's one key whose hash starts with the prefix (see `TenantStore`)."""
        return _revoke_key(self._tables, tenant, key_id_prefix, now)

    async def session_secret(self, candidate: str) -> str:
        """The stored dashboard session secret (`candidate`, if none was stored)."""
        if self._tables.session_secret is None:
            self._tables.session_secret = candidate
        return self._tables.session_secret
