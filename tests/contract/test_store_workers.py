"""Contract: the worker registry: registering, heartbeats, stopping, and pruning."""

from __future__ import annotations

import dataclasses

from contract_support import T0, Backend

from backroom.core.workers import WorkerInfo, WorkerRecord, WorkerState
from backroom.store.protocol import Store

BEAT_MS = 10_000


def info(worker_id: str = "host-a:101:abc", **fields: object) -> WorkerInfo:
    """A worker that started at T0 on two queues."""
    values: dict[str, object] = {
        "worker_id": worker_id,
        "hostname": "host-a",
        "pid": 101,
        "queues": ("interactive", "batch"),
        "concurrency": 8,
        "heartbeat_ms": BEAT_MS,
        "started_at": T0,
    }
    values.update(fields)
    return WorkerInfo(**values)  # type: ignore[arg-type]


async def test_a_worker_registers_and_is_listed_as_it_said(store: Store) -> None:
    assert await store.workers() == []

    await store.worker_beat(info(), T0)

    assert await store.workers() == [WorkerRecord(info(), T0)]


async def test_a_heartbeat_refreshes_the_one_row_of_the_worker(store: Store) -> None:
    await store.worker_beat(info(), T0)
    await store.worker_beat(info(), T0 + BEAT_MS)

    (record,) = await store.workers()

    assert record.heartbeat_at == T0 + BEAT_MS
    assert record.state(T0 + 2 * BEAT_MS) is WorkerState.ALIVE
    assert record.state(T0 + 4 * BEAT_MS) is WorkerState.LOST


async def test_workers_are_listed_by_id_with_every_queue_or_none(store: Store) -> None:
    await store.worker_beat(info("b", queues=()), T0)
    await store.worker_beat(info("a", hostname="host-b", pid=7, concurrency=1), T0 + 5)

    listed = await store.workers()

    assert [record.info.worker_id for record in listed] == ["a", "b"]
    assert listed[0].info == info("a", hostname="host-b", pid=7, concurrency=1)
    assert listed[1].info.queues == ()


async def test_a_stopped_worker_says_so_and_beats_again_if_it_comes_back(store: Store) -> None:
    await store.worker_beat(info(), T0)

    assert await store.worker_stopped(info().worker_id, T0 + 3)
    assert not await store.worker_stopped("nobody", T0 + 3)
    (stopped,) = await store.workers()
    assert stopped.stopped_at == T0 + 3
    assert stopped.state(T0 + 3) is WorkerState.STOPPED

    await store.worker_beat(info(), T0 + 5)
    (again,) = await store.workers()
    assert again == WorkerRecord(info(), T0 + 5)


async def test_prune_deletes_the_workers_not_heard_of_since_the_cutoff(store: Store) -> None:
    await store.worker_beat(info("lost"), T0)
    await store.worker_beat(info("stopped"), T0)
    await store.worker_stopped("stopped", T0 + 100)
    await store.worker_beat(info("alive"), T0)
    await store.worker_beat(info("alive"), T0 + 200)

    assert await store.prune_workers(T0 + 100) == 1
    assert [record.info.worker_id for record in await store.workers()] == ["alive", "stopped"]
    assert await store.prune_workers(T0 + 100) == 0
    assert await store.prune_workers(T0 + 201) == 2
    assert await store.workers() == []


async def test_the_registry_is_shared_by_every_store_on_the_database(
    store: Store, backend: Backend
) -> None:
    other = await backend.open()
    restarted = dataclasses.replace(info(), pid=202, started_at=T0 + 9)

    await other.worker_beat(info(), T0)
    await store.worker_beat(restarted, T0 + 9)

    assert await other.workers() == [WorkerRecord(restarted, T0 + 9)]
