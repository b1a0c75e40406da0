"""Contract: tenants and their API keys (stored as hashes only)."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from contract_support import T0

from backroom.core.usage import DailyBudget
from backroom.store.protocol import KeyInfo, Store, Tenant
from backroom.store.records import KeyHolder

ACME = Tenant("acme", created_at=T0, max_queued=100, daily_budget=DailyBudget.of_usd(Decimal("5")))


async def test_a_key_finds_its_tenant_until_revoked(store: Store) -> None:
    assert await store.create_tenant(ACME, "hash-1") == ACME
    await store.create_tenant(ACME, "hash-2")

    assert await store.tenant_for_key("hash-1") == KeyHolder(ACME)
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
    assert await store.tenant_for_key("hash-1") == KeyHolder(capped)


async def test_update_tenant_sets_its_caps_and_leaves_the_rest(store: Store) -> None:
    admins = Tenant("admins", created_at=T0, admin=True)
    await store.create_tenant(admins, "hash-1")

    updated = await store.update_tenant("admins", 3, DailyBudget.of_usd(Decimal("2")), 7)
    cleared = await store.update_tenant("admins", None, None, None)

    assert updated == Tenant("admins", T0, 3, True, DailyBudget.of_usd(Decimal("2")), 7)
    assert cleared == admins
    assert await store.get_tenant("admins") == admins
    assert await store.tenant_for_key("hash-1") == KeyHolder(admins)
    assert await store.update_tenant("nobody", 1, None, None) is None
    assert await store.list_tenants() == [admins]


async def test_list_keys_shows_each_key_of_the_tenant_only(store: Store) -> None:
    await store.create_tenant(ACME, "aaaa11")
    await store.create_tenant(Tenant("other", created_at=T0), "aaaa22")
    await store.create_tenant(dataclasses.replace(ACME, created_at=T0 + 5), "bbbb33")
    await store.revoke_keys("acme", T0 + 9)

    assert await store.list_keys("acme") == [
        KeyInfo("aaaa11", T0, T0 + 9),
        KeyInfo("bbbb33", T0 + 5, T0 + 9),
    ]
    assert await store.list_keys("nobody") == []


async def test_revoke_key_revokes_one_key_its_prefix_names(store: Store) -> None:
    for key_hash in ("aaaa11", "aaaa22", "bbbb33"):
        await store.create_tenant(ACME, key_hash)
    await store.create_tenant(Tenant("other", created_at=T0), "cccc44")

    assert not await store.revoke_key("acme", "aaaa", T0 + 1)  # two keys match
    assert not await store.revoke_key("acme", "cccc", T0 + 1)  # another tenant's
    assert not await store.revoke_key("acme", "dddd", T0 + 1)
    assert await store.revoke_key("acme", "aaaa2", T0 + 1)
    assert not await store.revoke_key("acme", "aaaa2", T0 + 2)  # revoked already

    assert await store.tenant_for_key("aaaa22") is None
    assert await store.tenant_for_key("aaaa11") == KeyHolder(ACME)
    assert await store.tenant_for_key("cccc44") is not None
    # The revoked key still counts, so "aaaa" stays ambiguous.
    assert not await store.revoke_key("acme", "aaaa", T0 + 3)
    assert [key.revoked_at for key in await store.list_keys("acme")] == [None, T0 + 1, None]


async def test_a_read_only_key_says_so_and_is_listed_as_such(store: Store) -> None:
    await store.create_tenant(ACME, "hash-1")
    await store.create_tenant(ACME, "hash-2", read_only=True)

    assert await store.tenant_for_key("hash-2") == KeyHolder(ACME, read_only=True)
    assert await store.tenant_for_key("hash-1") == KeyHolder(ACME, read_only=False)
    assert [key.read_only for key in await store.list_keys("acme")] == [False, True]


async def test_the_first_session_secret_stored_is_the_one_every_caller_gets(store: Store) -> None:
    first = await store.session_secret("secret-a")
    second = await store.session_secret("secret-b")

    assert (first, second) == ("secret-a", "secret-a")
