"""Contract: claiming due jobs, in order, under fresh leases."""

from __future__ import annotations

from contract_support import LEASE_MS, T0, WORKER, submit

from backroom.core import transitions
from backroom.core.job import Attempt, JobEvent, JobState
from backroom.store.protocol import Store


async def test_a_claim_runs_the_job_under_a_fresh_lease(store: Store) -> None:
    queued = await submit(store)

    (claimed,) = await store.claim([], 10, WORKER, LEASE_MS, T0 + 100)

    assert claimed == transitions.claim(queued, T0 + 100, WORKER, LEASE_MS)
    assert claimed.lease.token == 1
    assert claimed.lease_expires_at == T0 + 100 + LEASE_MS
    assert await store.get(queued.id) == claimed


async def test_a_claim_records_the_attempt_and_the_transition(store: Store) -> None:
    job = await submit(store)

    await store.claim([], 1, WORKER, LEASE_MS, T0 + 100)

    assert await store.attempts(job.id) == [
        Attempt(job.id, 1, WORKER, started_at=T0 + 100, lease_token=1)
    ]
    assert (await store.events(job.id))[-1] == JobEvent(
        job.id, T0 + 100, JobState.QUEUED, JobState.RUNNING, "claimed"
    )


async def test_claims_come_by_priority_then_due_time_then_submission(store: Store) -> None:
    late = await submit(store, run_at=T0 + 20)
    early = await submit(store, run_at=T0 + 10)
    urgent = await submit(store, run_at=T0 + 30, priority=5)
    early_twin = await submit(store, run_at=T0 + 10)

    claimed = await store.claim([], 10, WORKER, LEASE_MS, T0 + 100)

    assert [job.id for job in claimed] == [urgent.id, early.id, early_twin.id, late.id]


async def test_a_claim_takes_at_most_its_limit_and_leaves_the_rest(store: Store) -> None:
    jobs = [await submit(store) for _ in range(5)]

    first = await store.claim([], 2, WORKER, LEASE_MS, T0)
    second = await store.claim([], 10, WORKER, LEASE_MS, T0)

    assert [job.id for job in first] == [jobs[0].id, jobs[1].id]
    assert [job.id for job in second] == [job.id for job in jobs[2:]]
    assert await store.claim([], 10, WORKER, LEASE_MS, T0) == []


async def test_a_claim_of_zero_jobs_takes_none(store: Store) -> None:
    await submit(store)

    assert await store.claim([], 0, WORKER, LEASE_MS, T0) == []


async def test_jobs_not_yet_due_are_not_claimed(store: Store) -> None:
    job = await submit(store, run_at=T0 + 1_000)

    assert await store.claim([], 10, WORKER, LEASE_MS, T0 + 999) == []
    assert [claimed.id for claimed in await store.claim([], 10, WORKER, LEASE_MS, T0 + 1_000)] == [
        job.id
    ]


async def test_a_claim_takes_only_from_the_queues_it_names(store: Store) -> None:
    interactive = await submit(store, queue="interactive")
    batch = await submit(store, queue="batch")
    other = await submit(store, queue="other")

    from_batch = await store.claim(["batch"], 10, WORKER, LEASE_MS, T0)
    from_two = await store.claim(["interactive", "other"], 10, WORKER, LEASE_MS, T0)

    assert [job.id for job in from_batch] == [batch.id]
    assert [job.id for job in from_two] == [interactive.id, other.id]


async def test_running_and_finished_jobs_are_not_claimed_again(store: Store) -> None:
    await submit(store)
    await store.claim([], 1, WORKER, LEASE_MS, T0)

    assert await store.claim([], 10, "worker-2", LEASE_MS, T0 + 1) == []
