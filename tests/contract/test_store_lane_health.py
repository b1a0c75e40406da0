"""Contract: a lane's 429 backoff and its breaker, kept in the store for every worker."""

from __future__ import annotations

from contract_support import LEASE_MS, T0, WORKER, running, submit

from backroom.core.job import Job
from backroom.core.lane_health import CallOutcome, breaker_cooldown_ms
from backroom.core.lane_settlement import LaneSettlement
from backroom.core.lanes import (
    BREAKER_THRESHOLD,
    PROBE_HOLD_MS,
    Denied,
    Grant,
    LaneLimits,
    LaneRequest,
    LaneState,
    WaitReason,
)
from backroom.store.protocol import Store

LANE = "mock/health"
LIMITS = LaneLimits(max_concurrency=8)
REQUEST = LaneRequest(LANE, LIMITS, 10)


async def called(store: Store, now: int) -> Job:
    """A running job in LANE holding a grant taken at `now`."""
    job = await running(store, now, lane=LANE)
    assert isinstance(await store.lane_acquire(job.lease, REQUEST, now), Grant)
    return job


async def ended(store: Store, job: Job, outcome: CallOutcome, sent_at: int, now: int,
                pause_until: int | None = None) -> None:  # fmt: skip
    settlement = LaneSettlement(
        LANE, sent_at, used_tokens=None, pause_until=pause_until, outcome=outcome, jitter=0.0
    )
    await store.lane_settle(job.lease, settlement, now)


async def state(store: Store, now: int) -> LaneState:
    (status,) = await store.lanes(now)
    return status.state


async def test_429s_without_a_wait_pause_the_lane_longer_each_time(store: Store) -> None:
    first = await called(store, T0)
    await ended(store, first, CallOutcome.RATE_LIMITED, T0, T0 + 10)
    lane = await state(store, T0 + 10)
    assert (lane.refusal_streak, lane.paused_until) == (1, T0 + 10 + 500)
    # Every worker's claim passes the lane's jobs over until then.
    waiting = await submit(store, lane=LANE)
    assert await store.claim([], 10, WORKER, LEASE_MS, T0 + 509) == []

    resumed = T0 + 510
    (second,) = await store.claim([], 10, WORKER, LEASE_MS, resumed)
    assert second.id == waiting.id
    assert isinstance(await store.lane_acquire(second.lease, REQUEST, resumed), Grant)
    await ended(store, second, CallOutcome.RATE_LIMITED, resumed, resumed + 10)
    lane = await state(store, resumed + 10)
    assert (lane.refusal_streak, lane.paused_until) == (2, resumed + 10 + 1_000)


async def test_a_retry_after_is_kept_as_the_pause(store: Store) -> None:
    job = await called(store, T0)
    await ended(store, job, CallOutcome.RATE_LIMITED, T0, T0 + 10, pause_until=T0 + 5_600)
    lane = await state(store, T0 + 10)
    assert (lane.refusal_streak, lane.paused_until) == (1, T0 + 5_600)


async def test_an_answer_ends_the_429_streak(store: Store) -> None:
    refused = await called(store, T0)
    answered = await called(store, T0)
    await ended(store, refused, CallOutcome.RATE_LIMITED, T0, T0 + 10)
    await ended(store, answered, CallOutcome.ANSWERED, T0, T0 + 20)
    assert (await state(store, T0 + 20)).refusal_streak == 0


async def test_the_breaker_opens_probes_and_closes_for_every_worker(store: Store) -> None:
    jobs = [await called(store, T0) for _ in range(BREAKER_THRESHOLD)]
    for job in jobs:
        await ended(store, job, CallOutcome.FAILED, T0, T0 + 10)
    lane = await state(store, T0 + 10)
    reopens = T0 + 10 + breaker_cooldown_ms(BREAKER_THRESHOLD, 0.0)
    assert (lane.failure_streak, lane.paused_until) == (BREAKER_THRESHOLD, reopens)

    for _ in range(2):
        await submit(store, reopens, lane=LANE)
    probe, other = await store.claim([], 2, WORKER, LEASE_MS, reopens)
    assert isinstance(await store.lane_acquire(probe.lease, REQUEST, reopens), Grant)
    # Shut behind the probe, for every worker.
    assert await store.lane_acquire(other.lease, REQUEST, reopens + 1) == Denied(
        WaitReason.PAUSED, None
    )
    assert (await state(store, reopens + 1)).paused_until == reopens + PROBE_HOLD_MS
    await ended(store, probe, CallOutcome.ANSWERED, reopens, reopens + 100)
    lane = await state(store, reopens + 100)
    assert (lane.failure_streak, lane.paused_until) == (0, reopens + 100)
    assert isinstance(await store.lane_acquire(other.lease, REQUEST, reopens + 101), Grant)
