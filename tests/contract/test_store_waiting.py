"""Contract: a job that could not start says why it waits, and counts as waiting since
it was first due (in the oldest-queued age), until an attempt really runs."""

from __future__ import annotations

from contract_support import BOOM, LEASE_MS, T0, WORKER, running

from backroom.core.job import JobState, WaitReason
from backroom.core.outcome import Deferred, RetryAt, Succeeded
from backroom.store.protocol import Store

TOMORROW = T0 + 86_400_000


async def claim_at(store: Store, now: int) -> None:
    (claimed,) = await store.claim([], 1, WORKER, LEASE_MS, now)
    await store.finish([(claimed.lease, Deferred(TOMORROW, wait=WaitReason.BUDGET))], now)


async def test_a_deferred_job_waits_with_its_reason_since_it_was_first_due(store: Store) -> None:
    job = await running(store, T0, run_at=T0 - 5_000)
    lane_busy = Deferred(T0 + 10, "lane busy")
    assert await store.finish([(job.lease, lane_busy)], T0)

    waiting = await store.get(job.id)
    assert waiting is not None
    assert (waiting.state, waiting.wait_reason) == (JobState.QUEUED, WaitReason.LANE)
    assert (waiting.run_at, waiting.waiting_since, waiting.attempt) == (T0 + 10, T0 - 5_000, 0)

    # Deferred again, for another reason: it still waits since it was first due.
    await claim_at(store, T0 + 20)
    budget = await store.get(job.id)
    assert budget is not None
    assert (budget.wait_reason, budget.run_at) == (WaitReason.BUDGET, TOMORROW)
    assert budget.waiting_since == T0 - 5_000
    # Not due before tomorrow, yet it has waited since T0 - 5 s: the age counts it.
    (stats,) = await store.stats(T0 + 1_000)
    assert stats.oldest_queued_age_ms == 6_000
    (backlog,) = await store.queued_by_task(T0 + 1_000)
    assert backlog.oldest_due_age_ms == 6_000


async def test_an_attempt_that_runs_ends_the_wait(store: Store) -> None:
    job = await running(store, T0)
    await store.finish([(job.lease, Deferred(T0 + 10, "lane busy"))], T0)
    (claimed,) = await store.claim([], 1, WORKER, LEASE_MS, T0 + 10)
    assert claimed.wait_reason is WaitReason.LANE  # a claim alone does not end it
    await store.finish([(claimed.lease, RetryAt(T0 + 60_000, BOOM))], T0 + 20)

    retried = await store.get(job.id)
    assert retried is not None
    assert (retried.wait_reason, retried.waiting_since) == (None, None)
    # A job waiting for its retry's backoff is not due: no age yet.
    (stats,) = await store.stats(T0 + 1_000)
    assert stats.oldest_queued_age_ms is None

    (again,) = await store.claim([], 1, WORKER, LEASE_MS, T0 + 60_000)
    await store.finish([(again.lease, Deferred(T0 + 70_000, "lane busy"))], T0 + 60_001)
    (last,) = await store.claim([], 1, WORKER, LEASE_MS, T0 + 70_000)
    await store.finish([(last.lease, Succeeded("ok"))], T0 + 70_001)
    done = await store.get(job.id)
    assert done is not None
    assert (done.state, done.wait_reason, done.waiting_since) == (JobState.SUCCEEDED, None, None)
