"""Contract: a paused queue or lane gives no worker a job until it is resumed."""

from __future__ import annotations

from contract_support import LEASE_MS, T0, WORKER, submit
from test_store_queries import announced

from backroom.store.protocol import Store
from backroom.store.records import Pause, PauseKind

QUEUE, LANE = PauseKind.QUEUE, PauseKind.LANE


async def test_a_paused_queue_is_passed_over_by_every_claim(store: Store) -> None:
    held = await submit(store, queue="batch")
    free = await submit(store, queue="interactive")

    await store.pause(QUEUE, "batch", T0)

    assert [job.id for job in await store.claim([], 10, WORKER, LEASE_MS, T0)] == [free.id]
    assert await store.claim(["batch"], 10, WORKER, LEASE_MS, T0) == []
    assert await store.resume(QUEUE, "batch")
    assert [job.id for job in await store.claim(["batch"], 10, WORKER, LEASE_MS, T0)] == [held.id]


async def test_a_paused_lane_holds_its_jobs_in_every_queue(store: Store) -> None:
    in_lane = await submit(store, lane="openai/gpt-4o-mini")
    other_lane = await submit(store, lane="openai/gpt-4o")
    no_lane = await submit(store, queue="batch")

    await store.pause(LANE, "openai/gpt-4o-mini", T0)
    claimed = await store.claim([], 10, WORKER, LEASE_MS, T0)

    assert [job.id for job in claimed] == [other_lane.id, no_lane.id]
    await store.resume(LANE, "openai/gpt-4o-mini")
    assert [job.id for job in await store.claim([], 10, WORKER, LEASE_MS, T0)] == [in_lane.id]


async def test_a_pause_is_shared_by_every_store_on_the_database(
    store: Store, backend: object
) -> None:
    other = await backend.open()  # type: ignore[attr-defined]
    await submit(store)

    await other.pause(QUEUE, "interactive", T0)

    assert await store.claim([], 10, WORKER, LEASE_MS, T0) == []


async def test_pauses_are_listed_and_a_second_pause_keeps_the_first(store: Store) -> None:
    assert await store.pauses() == []

    await store.pause(QUEUE, "batch", T0)
    again = await store.pause(QUEUE, "batch", T0 + 500)
    await store.pause(LANE, "openai/gpt-4o", T0 + 10)
    await store.pause(QUEUE, "Zeta", T0 + 20)

    assert again == Pause(QUEUE, "batch", T0)
    assert await store.pauses() == [
        Pause(LANE, "openai/gpt-4o", T0 + 10),
        Pause(QUEUE, "Zeta", T0 + 20),
        Pause(QUEUE, "batch", T0),
    ]
    assert await store.resume(QUEUE, "batch")
    assert not await store.resume(QUEUE, "batch")
    assert not await store.resume(LANE, "batch")
    assert [pause.name for pause in await store.pauses()] == ["openai/gpt-4o", "Zeta"]


async def test_paused_work_has_no_wakeup_until_resumed(store: Store) -> None:
    await submit(store, queue="batch", run_at=T0 + 100)
    await submit(store, lane="openai/gpt-4o", run_at=T0 + 200)
    await store.pause(QUEUE, "batch", T0)
    await store.pause(LANE, "openai/gpt-4o", T0)

    assert await store.next_wakeup([]) is None
    assert await store.next_wakeup(["batch"]) is None

    await store.resume(LANE, "openai/gpt-4o")
    assert await store.next_wakeup([]) == T0 + 200
    await store.resume(QUEUE, "batch")
    assert await store.next_wakeup([]) == T0 + 100


async def test_a_resume_is_announced_as_new_work(store: Store) -> None:
    await submit(store, queue="batch")
    await store.pause(QUEUE, "batch", T0)

    await announced(store, lambda: store.resume(QUEUE, "batch"))
