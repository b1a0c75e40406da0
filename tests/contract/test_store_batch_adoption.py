"""Contract: the provider ids a recovered intent must not adopt (`adopted_batch_ids`).

Anthropic's batches carry no metadata, so an intent left by a crash is matched to a
batch by its time and size (`llm.providers.anthropic.batch_find`); a batch whose id
another stored batch holds, open or closed, is never a candidate.
"""

from __future__ import annotations

from contract_support import T0, running

from backroom.store.protocol import Store

HOLD_MS = 60_000


async def _sent(store: Store, name: str, provider: str, at: int, batch_id: str | None) -> int:
    job = await running(store, at)
    assert await store.offload(job.lease, "lane", at)
    batch, _ = await store.batch_create(name, provider, "lane", [job.lease], at, HOLD_MS)
    if batch_id is not None:
        await store.batch_submitted(batch.id, batch_id, at + 1)
    return batch.id


async def test_adopted_ids_are_those_of_the_provider_stored_since(store: Store) -> None:
    await _sent(store, "old", "claude", T0, "msgbatch_old")
    closed = await _sent(store, "closed", "claude", T0 + 10, "msgbatch_closed")
    await store.batch_close(closed, "ended", T0 + 20)
    await _sent(store, "open", "claude", T0 + 30, "msgbatch_open")
    await _sent(store, "intent", "claude", T0 + 40, None)
    await _sent(store, "other", "openai", T0 + 50, "batch_other")

    adopted = await store.adopted_batch_ids("claude", T0 + 10)

    assert adopted == {"msgbatch_closed", "msgbatch_open"}
    assert await store.adopted_batch_ids("claude", T0 + 100) == set()
