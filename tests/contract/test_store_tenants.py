"""Contract: tenants and their API keys (stored as hashes only)."""

from __future__ import annotations

from decimal import Decimal

from contract_support import T0

from backroom.core.usage import DailyBudget
from backroom.store.protocol import Store, Tenant

ACME = Tenant("acme", created_at=T0, max_queued=100, daily_budget=DailyBudget.of_usd(Decimal("5")))


async def test_a_key_finds_its_tenant_until_revoked(store: Store) -> None:
    assert await store.create_tenant(ACME, "hash-1") == ACME
    await store.create_tenant(ACME, "hash-2")

    assert await store.tenant_for_key("hash-1") == ACME
    assert await store.tenant_for_key("unknown") is None
    assert await store.revoke_keys("acme", T0 + 1) == 2
    assert await store.tenant_for_key("hash-2") is None
    assert await store.revoke_keys("acme", T0 + 2) == 0


async def test_creating_a_tenant_again_updates_its_caps(store: Store) -> None:
    await store.create_tenant(ACME, "hash-1")
    admins = Tenant("admins", created_at=T0, admin=True)
    await store.create_tenant(admins, "hash-2")

    capped = Tenant("acme", created_at=T0, max_queued=5)
    await store.create_tenant(capped, "hash-3")

    assert await store.list_tenants() == [capped, admins]
    assert await store.tenant_for_key("hash-1") == capped
