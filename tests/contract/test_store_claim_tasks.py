"""Contract: a worker claims only the tasks it has; jobs of other tasks stay queued."""

from __future__ import annotations

from contract_support import LEASE_MS, T0, WORKER, submit

from backroom.core.job import JobState
from backroom.store.protocol import Store
from backroom.store.records import PauseKind, TaskBacklog


async def test_a_claim_takes_only_the_named_tasks_in_claim_order(store: Store) -> None:
    shout = await submit(store, task="shout")
    whisper = await submit(store, task="whisper", priority=5)
    later_shout = await submit(store, task="shout")
    urgent_echo = await submit(store, task="echo", priority=9)

    claimed = await store.claim([], 10, WORKER, LEASE_MS, T0, tasks=["whisper", "shout"])

    assert [job.id for job in claimed] == [whisper.id, shout.id, later_shout.id]
    left = await store.get(urgent_echo.id)
    assert left is not None
    assert (left.state, left.attempt) == (JobState.QUEUED, 0)


async def test_jobs_of_other_tasks_ahead_do_not_hide_a_workers_own(store: Store) -> None:
    for _ in range(5):
        await submit(store, task="unknown", priority=1)
    mine = await submit(store, task="mine")

    claimed = await store.claim(["interactive"], 2, WORKER, LEASE_MS, T0, tasks=["mine"])

    assert [job.id for job in claimed] == [mine.id]


async def test_no_tasks_claims_nothing_and_none_claims_any(store: Store) -> None:
    first = await submit(store, task="a")
    second = await submit(store, task="b")

    assert await store.claim([], 10, WORKER, LEASE_MS, T0, tasks=[]) == []
    claimed = await store.claim([], 10, WORKER, LEASE_MS, T0, tasks=None)

    assert [job.id for job in claimed] == [first.id, second.id]


async def test_next_wakeup_sees_only_the_named_tasks(store: Store) -> None:
    await submit(store, task="other", run_at=T0 + 10)
    await submit(store, task="mine", run_at=T0 + 500)

    assert await store.next_wakeup([], tasks=["mine"]) == T0 + 500
    assert await store.next_wakeup([], tasks=["absent"]) is None
    assert await store.next_wakeup([]) == T0 + 10
    (running,) = await store.claim([], 1, WORKER, LEASE_MS, T0 + 600, tasks=["mine"])
    assert await store.next_wakeup([], tasks=["mine"]) == running.lease_expires_at


async def test_next_wakeup_is_the_earliest_of_each_queue_task_and_open_lane(store: Store) -> None:
    # The stores read the earliest job of each (queue, task, lane): each one counts.
    await submit(store, queue="one", task="a", run_at=T0 + 400)
    await submit(store, queue="one", task="a", lane="p/x", run_at=T0 + 300)
    await submit(store, queue="one", task="b", lane="p/y", run_at=T0 + 200)
    await submit(store, queue="one", task="b", lane="p/z", run_at=T0 + 250)
    await submit(store, queue="two", task="c", run_at=T0 + 100)

    assert await store.next_wakeup([]) == T0 + 100
    assert await store.next_wakeup(["one"]) == T0 + 200
    assert await store.next_wakeup(["one", "two"], tasks=["a", "b"]) == T0 + 200
    assert await store.next_wakeup([], tasks=["a"]) == T0 + 300
    await store.pause(PauseKind.LANE, "p/x", T0)
    await store.pause(PauseKind.LANE, "p/y", T0)
    assert await store.next_wakeup([], tasks=["a"]) == T0 + 400
    assert await store.next_wakeup(["one"]) == T0 + 250
    await store.pause(PauseKind.QUEUE, "two", T0)
    assert await store.next_wakeup(["two"]) is None
    assert await store.next_wakeup([], tasks=["c", "b"]) == T0 + 250


async def test_queued_jobs_are_counted_by_task_with_the_oldest_due_age(store: Store) -> None:
    await submit(store, task="shout", run_at=T0)
    await submit(store, task="shout", run_at=T0 + 400)
    await submit(store, task="later", run_at=T0 + 10_000)
    await submit(store, task="done")
    await store.claim([], 1, WORKER, LEASE_MS, T0 + 1_000, tasks=["done"])

    backlog = await store.queued_by_task(T0 + 1_000)

    assert backlog == [TaskBacklog("later", 1, None), TaskBacklog("shout", 2, 1_000)]
