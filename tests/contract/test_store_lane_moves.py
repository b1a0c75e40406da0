"""Contract: a job's current lane is stored on it, each attempt names the lane its call
went to, and the worker holding the job may move it (a fallback)."""

from __future__ import annotations

from contract_support import (
    BOOM,
    LEASE_MS,
    T0,
    WORKER,
    running,
)

from backroom.core.lanes import LaneLimits, LaneRequest
from backroom.core.outcome import RetryAt
from backroom.store.protocol import Store

BIG, SMALL = "mock/big", "mock/small"


async def test_a_claim_records_the_jobs_lane_on_its_attempt(store: Store) -> None:
    job = await running(store, lane=BIG)

    (attempt,) = await store.attempts(job.id)
    assert (job.lane, attempt.lane) == (BIG, BIG)


async def test_moving_before_the_call_moves_the_attempt_and_frees_the_grant(store: Store) -> None:
    job = await running(store, lane=BIG)
    await store.lane_acquire(job.lease, LaneRequest(BIG, LaneLimits(max_concurrency=1), 10), T0)
    (lane,) = await store.lanes(T0)
    assert lane.state.in_flight == 1

    assert await store.move_lane(job.lease, SMALL, T0 + 1, attempt=True)

    moved = await store.get(job.id)
    assert moved is not None
    assert (moved.lane, moved.updated_at) == (SMALL, T0 + 1)
    assert [attempt.lane for attempt in await store.attempts(job.id)] == [SMALL]
    (lane,) = await store.lanes(T0 + 1)
    assert (lane.name, lane.state.in_flight) == (BIG, 0)


async def test_moving_after_the_call_leaves_the_attempt_where_it_ran(store: Store) -> None:
    job = await running(store, lane=BIG)

    assert await store.move_lane(job.lease, SMALL, T0 + 1, attempt=False)
    assert await store.finish([(job.lease, RetryAt(T0 + 2, BOOM))], T0 + 1) == [True]
    (again,) = await store.claim([], 1, WORKER, LEASE_MS, T0 + 2)

    assert again.lane == SMALL
    assert [attempt.lane for attempt in await store.attempts(job.id)] == [BIG, SMALL]


async def test_only_the_lease_holder_moves_a_job(store: Store) -> None:
    job = await running(store, lane=BIG)
    stale = job.lease
    await store.finish([(job.lease, RetryAt(T0, BOOM))], T0)

    assert not await store.move_lane(stale, SMALL, T0 + 1, attempt=True)
    unmoved = await store.get(job.id)
    assert unmoved is not None and unmoved.lane == BIG
