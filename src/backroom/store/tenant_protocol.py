"""The part of the store protocol behind tenants and their API keys (`TenantStore`).

Keys arrive and are stored as SHA-256 hex digests only; a key is named by a prefix
of its digest (`KeyInfo.key_id`).
"""

from __future__ import annotations

from typing import Protocol

from backroom.core.usage import DailyBudget
from backroom.store.records import KeyHolder, KeyInfo, Tenant


class TenantStore(Protocol):
    """Tenants and their API keys (keys are stored as SHA-256 hashes only)."""

    async def create_tenant(self, tenant: Tenant, key_hash: str, read_only: bool = False) -> Tenant:
        """Create `tenant` (or update its caps if it exists) and add the key to it
        (a key that may only look, with `read_only`)."""

    async def update_tenant(
        self,
        name: str,
        max_queued: int | None,
        daily_budget: DailyBudget | None,
        max_job_cost_pico_usd: int | None,
    ) -> Tenant | None:
        """Set the caps of tenant `name` (None: no cap); the tenant, or None if unknown."""

    async def tenant_for_key(self, key_hash: str) -> KeyHolder | None:
        """The tenant an unrevoked key belongs to, with the key's role, or None."""

    async def get_tenant(self, name: str) -> Tenant | None:
        """The tenant called `name`, or None."""

    async def list_tenants(self) -> list[Tenant]:
        """Every tenant, by name."""

    async def list_keys(self, tenant: str) -> list[KeyInfo]:
        """Every key of the tenant, revoked or not, oldest first."""

    async def revoke_keys(self, tenant: str, now: int) -> int:
        """Revoke every key of the tenant; how many were revoked."""

    async def revoke_key(self, tenant: str, key_id_prefix: str, now: int) -> bool:
        """Revoke the tenant's one key whose hash starts with the prefix.

        False, and nothing changes, when no key of the tenant or more than one (revoked
        or not) matches, or the one that matches is revoked already.
        """

    async def session_secret(self, candidate: str) -> str:
        """The stored secret that signs dashboard sessions: `candidate` stored by the first
        caller, the one stored already for every later caller (so all servers share it)."""
