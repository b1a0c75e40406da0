"""Contract: migrating is idempotent, even when several stores migrate at once."""

from __future__ import annotations

import asyncio

from contract_support import Backend, submit

from backroom.store.protocol import Store


async def test_migrating_again_keeps_the_data(store: Store) -> None:
    job = await submit(store)

    await store.migrate()

    assert await store.get(job.id) == job


async def test_stores_migrating_at_once_share_one_schema(backend: Backend) -> None:
    stores = await asyncio.gather(*(backend.open() for _ in range(3)))

    job = await submit(stores[0])

    assert [await store.get(job.id) for store in stores] == [job] * 3
