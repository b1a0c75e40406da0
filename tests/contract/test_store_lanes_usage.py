"""Contract: deferrals, and lanes shared through the store (usage: test_store_usage.py)."""

from __future__ import annotations

import pytest
from contract_support import LEASE_MS, T0, WORKER, Backend, running, submit

from backroom.core.errors import LeaseLost
from backroom.core.job import AttemptOutcome, ErrorInfo, Job, JobState, Lease
from backroom.core.lane_settlement import LaneSettlement
from backroom.core.lanes import (
    CREDIT_PER_UNIT,
    Denied,
    Grant,
    LaneLimits,
    LaneRequest,
    WaitReason,
)
from backroom.core.outcome import Deferred, Succeeded
from backroom.llm.ratelimit_headers import RateLimitWindow
from backroom.store.protocol import Store

LANE = "mock/gpt"
# One request a second and 1,000 tokens a minute, two calls at a time.
LIMITS = LaneLimits(max_concurrency=2, requests_per_minute=60, tokens_per_minute=1_000)
LIMITED = ErrorInfo("RateLimited", "RateLimitError (HTTP 429): slow down")


def ask(tokens: int = 100, limits: LaneLimits = LIMITS) -> LaneRequest:
    return LaneRequest(LANE, limits, tokens)


async def lane_job(store: Store, now: int = T0, **fields: object) -> Job:
    """A running job in LANE, the only queued job when it is claimed."""
    return await running(store, now, lane=LANE, **fields)


async def the_lane(store: Store, now: int) -> tuple[int, int, int, int]:
    """(in flight, requests left, tokens left, paused until) of LANE at `now`."""
    (status,) = await store.lanes(now)
    assert status.name == LANE
    assert status.limits == LIMITS
    state = status.state
    return (
        state.in_flight,
        state.request_credit // CREDIT_PER_UNIT,
        state.token_credit // CREDIT_PER_UNIT,
        state.paused_until,
    )


# -- deferrals -------------------------------------------------------------------------


async def test_a_deferred_attempt_gives_its_attempt_back(store: Store) -> None:
    job = await running(store, max_attempts=1)
    later = T0 + 5_000

    assert await store.finish([(job.lease, Deferred(later, "lane busy", LIMITED))], T0 + 1)

    queued = await store.get(job.id)
    assert queued is not None
    assert (queued.state, queued.run_at, queued.attempt, queued.error) == (
        JobState.QUEUED,
        later,
        0,
        None,
    )
    (attempt,) = await store.attempts(job.id)
    assert (attempt.outcome, attempt.error, attempt.next_attempt_at) == (
        AttemptOutcome.DEFERRED,
        LIMITED,
        later,
    )
    assert (await store.events(job.id))[-1].reason == "lane busy"
    assert await store.claim([], 1, WORKER, LEASE_MS, later - 1) == []
    (again,) = await store.claim([], 1, WORKER, LEASE_MS, later)
    assert again.attempt == 1


async def test_a_deferred_job_whose_cancel_was_asked_is_cancelled(store: Store) -> None:
    job = await running(store)
    await store.cancel(job.id, T0 + 1)

    await store.finish([(job.lease, Deferred(T0 + 5_000))], T0 + 2)

    cancelled = await store.get(job.id)
    assert cancelled is not None
    assert cancelled.state is JobState.CANCELLED


# -- lanes -----------------------------------------------------------------------------


async def test_a_job_keeps_its_lane(store: Store) -> None:
    job = await submit(store, lane=LANE)

    stored = await store.get(job.id)
    assert stored is not None
    assert (job.lane, stored.lane) == (LANE, LANE)


async def test_a_grant_takes_a_slot_a_request_and_the_estimate(store: Store) -> None:
    job = await lane_job(store)

    assert await store.lane_acquire(job.lease, ask(100), T0) == Grant(100, T0)

    assert await the_lane(store, T0) == (1, 59, 900, 0)
    # A second later a request and 1,000 / 60 tokens have come back.
    assert await the_lane(store, T0 + 1_000) == (1, 60, 916, 0)


async def test_a_full_lane_denies_a_slot_and_the_claim_passes_it_over(store: Store) -> None:
    first, second, third = [await lane_job(store) for _ in range(3)]
    for job in (first, second):
        assert isinstance(await store.lane_acquire(job.lease, ask(10), T0), Grant)
    waiting = await submit(store, lane=LANE)
    other = await submit(store)

    assert await store.lane_acquire(third.lease, ask(10), T0) == Denied(
        WaitReason.CONCURRENCY, None
    )
    claimed = await store.claim([], 10, WORKER, LEASE_MS, T0)
    assert [job.id for job in claimed] == [other.id]
    # With no slot free the lane's jobs have no due time of their own: only the leases.
    assert await store.next_wakeup([]) == T0 + LEASE_MS
    assert waiting.state is JobState.QUEUED


async def test_a_short_bucket_pauses_the_lane_until_the_call_fits(store: Store) -> None:
    first, second = await lane_job(store), await lane_job(store)
    await store.lane_acquire(first.lease, ask(900), T0)
    waiting = await submit(store, lane=LANE)

    # 200 tokens, 100 there: 100 more come back in 6 seconds.
    assert await store.lane_acquire(second.lease, ask(200), T0) == Denied(
        WaitReason.TOKENS, T0 + 6_000
    )
    assert await the_lane(store, T0) == (1, 59, 100, T0 + 6_000)
    assert await store.claim([], 10, WORKER, LEASE_MS, T0 + 5_999) == []
    assert await store.next_wakeup([]) == T0 + 6_000
    (claimed,) = await store.claim([], 10, WORKER, LEASE_MS, T0 + 6_000)
    assert claimed.id == waiting.id


async def test_a_claim_takes_no_more_of_a_lane_than_it_has_room_for(store: Store) -> None:
    held = await lane_job(store)
    await store.lane_acquire(held.lease, ask(10), T0)
    lane_jobs = [await submit(store, lane=LANE) for _ in range(5)]
    plain = [await submit(store) for _ in range(2)]

    claimed = await store.claim([], 10, WORKER, LEASE_MS, T0)

    # One slot of two is free.
    assert sorted(job.id for job in claimed) == [lane_jobs[0].id, *(job.id for job in plain)]


async def test_an_expired_lease_gives_its_slot_back(store: Store) -> None:
    job = await lane_job(store)
    await store.lane_acquire(job.lease, ask(100), T0)

    await store.expire_leases(T0 + LEASE_MS)

    assert (await the_lane(store, T0 + LEASE_MS))[0] == 0


async def test_a_finished_attempt_gives_its_slot_back(store: Store) -> None:
    job = await lane_job(store)
    await store.lane_acquire(job.lease, ask(100), T0)

    await store.finish([(job.lease, Succeeded(None))], T0 + 1)

    assert (await the_lane(store, T0 + 1))[0] == 0


async def test_releasing_frees_the_slot_and_keeps_the_estimate_charged(store: Store) -> None:
    job = await lane_job(store)
    await store.lane_acquire(job.lease, ask(100), T0)

    assert await store.lane_release(job.lease)
    assert not await store.lane_release(job.lease)

    assert await the_lane(store, T0) == (0, 59, 900, 0)


async def test_a_lost_lease_takes_nothing_from_the_lane(store: Store) -> None:
    job = await lane_job(store)
    stale = Lease(job.id, job.lease_token + 1, job.attempt)

    with pytest.raises(LeaseLost):
        await store.lane_acquire(stale, ask(100), T0)

    assert await store.lanes(T0) == []


async def test_settling_reconciles_the_estimate_and_frees_the_slot(store: Store) -> None:
    job = await lane_job(store)
    await store.lane_acquire(job.lease, ask(100), T0)

    await store.lane_settle(job.lease, LaneSettlement(LANE, T0, used_tokens=40), T0)
    # A second settlement of the same call changes nothing.
    await store.lane_settle(job.lease, LaneSettlement(LANE, T0, used_tokens=40), T0)

    assert await the_lane(store, T0) == (0, 59, 960, 0)


async def test_a_429_pauses_the_lane_for_everyone(store: Store) -> None:
    job = await lane_job(store)
    await store.lane_acquire(job.lease, ask(100), T0)
    waiting = await submit(store, lane=LANE)

    refused = LaneSettlement(LANE, T0, used_tokens=0, pause_until=T0 + 3_000)
    await store.lane_settle(job.lease, refused, T0 + 10)

    assert await the_lane(store, T0 + 10) == (0, 59, 1_000, T0 + 3_000)
    assert await store.claim([], 10, WORKER, LEASE_MS, T0 + 2_999) == []
    (claimed,) = await store.claim([], 10, WORKER, LEASE_MS, T0 + 3_000)
    assert claimed.id == waiting.id


async def test_the_providers_report_throttles_the_lane(store: Store) -> None:
    job = await lane_job(store)
    await store.lane_acquire(job.lease, ask(100), T0)
    report = LaneSettlement(
        LANE,
        T0,
        used_tokens=100,
        requests=RateLimitWindow(limit=60, remaining=10, reset_ms=50_000),
        tokens=RateLimitWindow(limit=1_000, remaining=300, reset_ms=42_000),
    )

    await store.lane_settle(job.lease, report, T0)

    assert await the_lane(store, T0) == (0, 10, 300, 0)


async def test_two_stores_on_one_database_share_the_lane(backend: Backend) -> None:
    one, other = await backend.open(), await backend.open()
    first, second = await lane_job(one), await lane_job(other)

    await one.lane_acquire(first.lease, ask(600), T0)
    denied = await other.lane_acquire(second.lease, ask(600), T0)

    assert denied == Denied(WaitReason.TOKENS, T0 + 12_000)
    assert await the_lane(one, T0) == (1, 59, 400, T0 + 12_000)
