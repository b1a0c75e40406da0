"""Contract: a job's history holds its running attempt as it stands, whatever has
happened to the job's row since the claim: a retry before it, an offload to a provider
batch (no worker on the row), a lane move that leaves the attempt in its lane, a lease
sweep that ends it."""

from __future__ import annotations

from contract_support import BOOM, LEASE_MS, T0, WORKER, running

from backroom.core import transitions
from backroom.core.job import Attempt, AttemptOutcome, Job
from backroom.core.outcome import RetryAt, Succeeded
from backroom.core.provider_batch import HandOff, LineEnd
from backroom.core.spend import CallIntent
from backroom.store.protocol import Store

BIG, SMALL, TINY = "mock/big", "mock/small", "mock/tiny"


def started(job: Job, lane: str | None = BIG, at: int = T0) -> Attempt:
    """The running attempt `job` (as claimed) has."""
    return Attempt(job.id, job.attempt, WORKER, at, lane=lane, lease_token=job.lease_token)


def intent(job: Job) -> CallIntent:
    """The call `job`'s attempt opens, unpriced."""
    return CallIntent(job.id, job.lease_token, job.attempt, job.tenant, "mock", "gpt", None, T0)


async def test_a_running_retry_follows_the_attempts_before_it(store: Store) -> None:
    job = await running(store, lane=BIG)
    assert await store.finish([(job.lease, RetryAt(T0 + 2, BOOM))], T0 + 1) == [True]
    (again,) = await store.claim([], 1, WORKER, LEASE_MS, T0 + 2)

    first, second = await store.attempts(job.id)

    assert (first.number, first.outcome, first.finished_at) == (1, AttemptOutcome.RETRY, T0 + 1)
    assert second == started(again, at=T0 + 2)


async def test_an_offloaded_attempt_keeps_its_worker_until_and_after_its_end(
    store: Store,
) -> None:
    job = await running(store, lane=BIG)
    assert await store.offload(job.lease, BIG, T0 + 1)

    assert await store.attempts(job.id) == [started(job)]
    assert await store.batch_finish([LineEnd(job.lease, Succeeded(1))], T0 + 5) == [True]
    (attempt,) = await store.attempts(job.id)
    assert (attempt.worker_id, attempt.lane, attempt.finished_at) == (WORKER, BIG, T0 + 5)
    assert attempt.outcome is AttemptOutcome.SUCCEEDED


async def test_a_group_hand_off_keeps_each_attempts_worker(store: Store) -> None:
    jobs = [await running(store, lane=BIG) for _ in range(2)]
    hand_offs = [HandOff(job.lease, BIG, intent(job), None) for job in jobs]

    assert all(await store.batch_hand_off(hand_offs, T0 + 1))

    for job in jobs:
        assert await store.attempts(job.id) == [started(job)]


async def test_an_attempt_left_in_its_lane_stays_there_while_it_runs(store: Store) -> None:
    job = await running(store, lane=BIG)

    assert await store.move_lane(job.lease, SMALL, T0 + 1, attempt=False)
    assert await store.attempts(job.id) == [started(job)]
    assert await store.move_lane(job.lease, TINY, T0 + 2, attempt=False)
    assert await store.attempts(job.id) == [started(job)]
    assert await store.move_lane(job.lease, SMALL, T0 + 3, attempt=True)
    assert await store.attempts(job.id) == [started(job, SMALL)]


async def test_a_lease_sweep_ends_an_attempt_left_in_its_lane(store: Store) -> None:
    job = await running(store, lane=BIG, max_attempts=2)
    assert await store.move_lane(job.lease, SMALL, T0 + 1, attempt=False)
    expired_at = T0 + LEASE_MS

    (swept,) = await store.expire_leases(expired_at)

    assert swept.lane == SMALL
    (attempt,) = await store.attempts(job.id)
    assert (attempt.lane, attempt.worker_id, attempt.finished_at) == (BIG, WORKER, expired_at)
    assert (attempt.outcome, attempt.error) == (
        AttemptOutcome.LEASE_EXPIRED,
        transitions.LEASE_EXPIRED,
    )
