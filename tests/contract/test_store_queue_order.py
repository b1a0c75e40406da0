"""Contract: queues in precedence order, and round robin among tenants within a queue."""

from __future__ import annotations

from contract_support import LEASE_MS, T0, WORKER, new_job, submit

from backroom.store.protocol import Store


async def claim_ids(store: Store, limit: int, queues: list[str] | None = None) -> list[int]:
    return [job.id for job in await store.claim(queues or [], limit, WORKER, LEASE_MS, T0)]


async def test_tenants_take_turns_within_a_queue(store: Store) -> None:
    hog = [await submit(store, tenant="hog") for _ in range(10)]
    small = [await submit(store, tenant="small") for _ in range(2)]

    assert await claim_ids(store, 5) == [hog[0].id, small[0].id, hog[1].id, small[1].id, hog[2].id]


async def test_priority_comes_before_the_round_robin(store: Store) -> None:
    hog = [await submit(store, tenant="hog") for _ in range(3)]
    urgent = await submit(store, tenant="small", priority=5)

    assert await claim_ids(store, 2) == [urgent.id, hog[0].id]


async def test_a_tenants_backlog_does_not_delay_another_tenants_job(store: Store) -> None:
    backlog = [new_job(tenant="bulk", queue="batch") for _ in range(10_000)]
    await store.submit_many(backlog, T0)
    late = await submit(store, tenant="late", queue="batch")

    assert late.id in await claim_ids(store, 2, ["batch"])


async def test_listed_queues_are_served_in_the_order_given(store: Store) -> None:
    batch = await submit(store, queue="batch")
    interactive = await submit(store, queue="interactive")

    assert await claim_ids(store, 1, ["interactive", "batch"]) == [interactive.id]
    assert await claim_ids(store, 1, ["interactive", "batch"]) == [batch.id]


async def test_all_queues_put_interactive_first_and_batch_last(store: Store) -> None:
    batch = await submit(store, queue="batch")
    emails = await submit(store, queue="emails")
    interactive = await submit(store, queue="interactive")

    assert await claim_ids(store, 3) == [interactive.id, emails.id, batch.id]


async def test_an_interactive_job_overtakes_a_batch_backlog(store: Store) -> None:
    await store.submit_many([new_job(tenant="bulk", queue="batch") for _ in range(1_000)], T0)
    asked = await submit(store, tenant="person", queue="interactive")

    assert await claim_ids(store, 1) == [asked.id]
