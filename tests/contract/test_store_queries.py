"""Contract: listing jobs, queue health, and what tells a worker when to look again."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from contract_support import BOOM, LEASE_MS, T0, WORKER, running, submit

from backroom.core.job import JobState
from backroom.core.outcome import Failed, RetryAt, Succeeded
from backroom.store.protocol import JobFilter, QueueStats, RedriveFilter, Store
from backroom.store.records import JobCount, queue_stats_of

HOUR_MS = 3_600_000


async def test_list_jobs_pages_newest_first(store: Store) -> None:
    ids = [(await submit(store)).id for _ in range(5)]

    first = await store.list_jobs(JobFilter(limit=2))
    second = await store.list_jobs(JobFilter(limit=2, before_id=first[-1].id))
    last = await store.list_jobs(JobFilter(limit=2, before_id=second[-1].id))

    assert [job.id for job in first + second + last] == ids[::-1]
    assert await store.list_jobs(JobFilter(before_id=last[-1].id)) == []


async def test_list_jobs_filters_by_tenant_state_queue_and_task(store: Store) -> None:
    match = await submit(store, tenant="acme", queue="batch", task="translate")
    await submit(store, tenant="globex", queue="batch", task="translate")
    await submit(store, tenant="acme", queue="interactive", task="translate")
    await submit(store, tenant="acme", queue="batch", task="summarize")

    found = await store.list_jobs(
        JobFilter(tenant="acme", queue="batch", task="translate", states=[JobState.QUEUED])
    )
    none_running = await store.list_jobs(JobFilter(states=[JobState.RUNNING]))

    assert found == [match]
    assert none_running == []


async def test_list_jobs_takes_several_states(store: Store) -> None:
    active = await running(store)
    done = await running(store)
    await store.finish([(done.lease, Succeeded(None))], T0)
    queued = await submit(store)

    found = await store.list_jobs(JobFilter(states=[JobState.QUEUED, JobState.RUNNING]))

    assert {job.id for job in found} == {queued.id, active.id}


async def test_stats_count_each_queue_by_state_and_recent_failures(store: Store) -> None:
    now = T0 + HOUR_MS
    old_failure = await running(store, queue="batch")
    await store.finish([(old_failure.lease, Failed(BOOM))], T0)
    recent_failure = await running(store, now, queue="batch")
    success = await running(store, now, queue="batch")
    await store.finish([(recent_failure.lease, Failed(BOOM))], now)
    await store.finish([(success.lease, Succeeded(None))], now)
    await running(store, now, queue="interactive")
    await submit(store, queue="batch", run_at=now - 4_000)
    await submit(store, queue="batch", run_at=now + 1)

    stats = await store.stats(now + 10, window_ms=HOUR_MS)
    counts = await store.job_counts(now + 10, window_ms=HOUR_MS)

    assert stats == [
        QueueStats("batch", 2, 0, 1, 2, 0, 4_010, finished_recently=2, failed_recently=1),
        QueueStats("interactive", 0, 1, 0, 0, 0, None),
    ]
    assert stats[0].failure_rate == 0.5
    # The metrics' one pass over the jobs adds up to the same.
    assert queue_stats_of(counts, now + 10) == stats


async def test_count_active_counts_the_tenants_queued_and_running_jobs(store: Store) -> None:
    await running(store, tenant="acme")
    done = await running(store, tenant="acme")
    await store.finish([(done.lease, Succeeded(None))], T0)
    await submit(store, tenant="acme")
    await submit(store, tenant="globex")

    assert await store.count_active("acme") == 2
    assert await store.count_active("initech") == 0


async def test_next_wakeup_is_the_earliest_due_time_or_lease_expiry(store: Store) -> None:
    assert await store.next_wakeup([]) is None
    await submit(store, queue="batch", run_at=T0 + 50_000)
    await running(store, queue="interactive")

    assert await store.next_wakeup([]) == T0 + LEASE_MS
    assert await store.next_wakeup(["batch"]) == T0 + 50_000
    assert await store.next_wakeup(["interactive"]) == T0 + LEASE_MS
    assert await store.next_wakeup(["other"]) is None


async def announced(store: Store, change: Callable[[], Awaitable[object]]) -> None:
    """Make `change` and wait until the store announces new work."""
    heard = asyncio.Event()
    store.on_new_work(heard.set)
    await change()
    await asyncio.wait_for(heard.wait(), timeout=10)


async def test_a_submission_is_announced_as_new_work(store: Store) -> None:
    await announced(store, lambda: submit(store))


async def test_a_retry_is_announced_as_new_work(store: Store) -> None:
    job = await running(store)

    await announced(store, lambda: store.finish([(job.lease, RetryAt(T0, BOOM))], T0))


async def test_a_redrive_is_announced_as_new_work(store: Store) -> None:
    job = await running(store)
    await store.finish([(job.lease, Failed(BOOM))], T0)

    await announced(store, lambda: store.redrive(RedriveFilter(), T0))


async def test_an_expired_lease_is_announced_as_new_work(store: Store) -> None:
    await running(store)

    await announced(store, lambda: store.expire_leases(T0 + LEASE_MS))


async def test_jobs_are_counted_by_queue_tenant_and_state(store: Store) -> None:
    await submit(store, tenant="acme")
    await submit(store, tenant="acme")
    await submit(store, tenant="Zeta", queue="batch")
    await submit(store, tenant="acme", queue="batch")
    await store.claim(["batch"], 1, WORKER, LEASE_MS, T0)

    counts = await store.job_counts(T0)

    assert counts == [
        JobCount("batch", "Zeta", JobState.RUNNING, 1),
        JobCount("batch", "acme", JobState.QUEUED, 1, oldest_due=T0),
        JobCount("interactive", "acme", JobState.QUEUED, 2, oldest_due=T0),
    ]
