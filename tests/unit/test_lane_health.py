"""A lane's backoff after 429s and its breaker after server errors (pure)."""

from __future__ import annotations

import dataclasses

import pytest

from backroom.core.lane_health import CallOutcome, after_call, breaker_cooldown_ms
from backroom.core.lane_settlement import LaneSettlement, settle
from backroom.core.lanes import (
    BREAKER_THRESHOLD,
    PROBE_HOLD_MS,
    Denied,
    Grant,
    LaneLimits,
    LaneState,
    WaitReason,
    acquire,
    full_lane,
)
from backroom.llm.ratelimit_headers import RateLimitWindow

T0 = 1_700_000_000_000
LIMITS = LaneLimits(max_concurrency=8)
LIMITED = CallOutcome.RATE_LIMITED
FAILED = CallOutcome.FAILED


def fresh() -> LaneState:
    return full_lane(LIMITS, T0)


def limited(state: LaneState, now: int, *, sent_at: int | None = None, jitter: float = 0.0,
            retry_after_until: int | None = None) -> LaneState:  # fmt: skip
    return after_call(
        state,
        LIMITED,
        sent_at=now if sent_at is None else sent_at,
        retry_after_until=retry_after_until,
        jitter=jitter,
        now=now,
    )


def test_429s_without_a_wait_back_off_exponentially_within_the_jitter_range() -> None:
    state, now, pauses = fresh(), T0, []
    for _ in range(8):
        state = limited(state, now, jitter=0.0)
        pauses.append(state.paused_until - now)
        now = state.paused_until
    # Equal jitter at its lowest: half of 1 s, 2 s, 4 s ... capped at a minute.
    assert pauses == [500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]
    assert state.refusal_streak == 8

    highest = limited(fresh(), T0, jitter=0.999)
    assert highest.paused_until - T0 == 999


def test_a_retry_after_is_the_floor_of_the_pause() -> None:
    first = limited(fresh(), T0, retry_after_until=T0 + 5_600, jitter=0.999)
    # The first time, exactly the provider's wait: it knows best.
    assert first.paused_until == T0 + 5_600

    # Refused again right after it: the backoff applies, but never below the wait.
    now = first.paused_until
    short_wait = limited(first, now, retry_after_until=now + 100, jitter=0.0)
    assert short_wait.paused_until == now + 500
    long_wait = limited(first, now, retry_after_until=now + 9_000, jitter=0.999)
    assert long_wait.paused_until == now + 9_000


def test_429s_of_calls_sent_before_the_pause_count_once() -> None:
    state = limited(fresh(), T0 + 100, sent_at=T0, jitter=0.0)
    paused_until = state.paused_until
    # Nine more calls that were on their way when the first 429 came back.
    for _ in range(9):
        state = limited(state, T0 + 120, sent_at=T0 + 10)
    assert (state.refusal_streak, state.paused_until) == (1, paused_until)
    # ...but their own Retry-After still holds.
    waited = limited(state, T0 + 130, sent_at=T0 + 10, retry_after_until=T0 + 9_000)
    assert waited.paused_until == T0 + 9_000


def test_an_answer_ends_the_streaks() -> None:
    state = dataclasses.replace(fresh(), refusal_streak=4, failure_streak=3)
    answered = after_call(
        state, CallOutcome.ANSWERED, sent_at=T0, retry_after_until=None, jitter=0.0, now=T0
    )
    assert (answered.refusal_streak, answered.failure_streak) == (0, 0)


def failed(state: LaneState, now: int, jitter: float = 0.0) -> LaneState:
    return after_call(state, FAILED, sent_at=now, retry_after_until=None, jitter=jitter, now=now)


def test_the_breaker_opens_after_failures_in_a_row_and_lets_one_probe_through() -> None:
    state, now = fresh(), T0
    for _ in range(BREAKER_THRESHOLD - 1):
        state = failed(state, now)
    assert state.paused_until == 0  # four server errors: the lane still runs
    state = failed(state, now)
    assert state.paused_until == now + breaker_cooldown_ms(BREAKER_THRESHOLD, 0.0)

    state, denied = acquire(state, LIMITS, 10, now + 1)
    assert denied == Denied(WaitReason.PAUSED, None)

    after_cooldown = state.paused_until
    state, probe = acquire(state, LIMITS, 10, after_cooldown)
    assert isinstance(probe, Grant)
    # Shut behind the probe: the next call waits for the probe's answer.
    state, held = acquire(state, LIMITS, 10, after_cooldown + 1)
    assert held == Denied(WaitReason.PAUSED, None)
    assert state.paused_until == after_cooldown + PROBE_HOLD_MS

    closed = after_call(
        state, CallOutcome.ANSWERED, sent_at=after_cooldown, retry_after_until=None,
        jitter=0.0, now=after_cooldown + 200,
    )  # fmt: skip
    assert (closed.failure_streak, closed.paused_until) == (0, after_cooldown + 200)
    _, granted = acquire(closed, LIMITS, 10, after_cooldown + 201)
    assert isinstance(granted, Grant)


def test_a_failed_probe_reopens_the_breaker_for_longer() -> None:
    state = fresh()
    for _ in range(BREAKER_THRESHOLD):
        state = failed(state, T0)
    first_cooldown = state.paused_until - T0
    probe_at = state.paused_until
    state, _ = acquire(state, LIMITS, 10, probe_at)
    state = failed(state, probe_at + 50)
    assert state.failure_streak == BREAKER_THRESHOLD + 1
    assert state.paused_until == probe_at + 50 + 2 * first_cooldown


@pytest.mark.parametrize("failures", [5, 6, 9, 40])
def test_the_breaker_cooldown_stays_within_two_minutes(failures: int) -> None:
    assert 2_500 <= breaker_cooldown_ms(failures, 0.0) <= breaker_cooldown_ms(failures, 0.999)
    assert breaker_cooldown_ms(failures, 0.999) < 120_000


def test_a_reset_lengthens_a_backoff_only_for_an_empty_window_without_a_retry_after() -> None:
    empty = RateLimitWindow(limit=100, remaining=0, reset_ms=20_000)
    refused = LaneSettlement("x/y", T0, used_tokens=0, tokens=empty, outcome=LIMITED, jitter=0.0)
    assert settle(fresh(), LIMITS, refused, 10, T0).paused_until == T0 + 20_000

    with_wait = dataclasses.replace(refused, pause_until=T0 + 3_000)
    assert settle(fresh(), LIMITS, with_wait, 10, T0).paused_until == T0 + 3_000

    room_left = dataclasses.replace(refused, tokens=dataclasses.replace(empty, remaining=5))
    assert settle(fresh(), LIMITS, room_left, 10, T0).paused_until == T0 + 500
