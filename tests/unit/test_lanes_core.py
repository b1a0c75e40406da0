"""Lane arithmetic, case by case: refill, acquire, reconcile, release, pause, throttle."""

from __future__ import annotations

import dataclasses

import pytest

from backroom.core.lane_throttle import throttle
from backroom.core.lanes import (
    CREDIT_PER_UNIT,
    Denied,
    Grant,
    LaneLimits,
    LaneState,
    WaitReason,
    acquire,
    full_lane,
    pause,
    reconcile,
    refill,
    release,
)
from backroom.llm.ratelimit_headers import RateLimitWindow

T0 = 1_700_000_000_000
# One request a second, ten tokens a second, two calls at a time.
LIMITS = LaneLimits(max_concurrency=2, requests_per_minute=60, tokens_per_minute=600)
UNLIMITED = LaneLimits()
FULL_TOKENS = 600 * CREDIT_PER_UNIT


def lane(
    requests: float = 60, tokens: float = 600, in_flight: int = 0, paused: int = 0
) -> LaneState:
    """A lane at T0 holding `requests` and `tokens` (whole or fractional units)."""
    return LaneState(
        request_credit=round(requests * CREDIT_PER_UNIT),
        token_credit=round(tokens * CREDIT_PER_UNIT),
        in_flight=in_flight,
        paused_until=paused,
        updated_at=T0,
    )


def test_a_new_lane_is_full_and_idle() -> None:
    assert full_lane(LIMITS, T0) == lane()
    assert full_lane(UNLIMITED, T0) == lane(requests=0, tokens=0)


@pytest.mark.parametrize(
    ("start", "elapsed_ms", "expected"),
    [
        (lane(requests=0, tokens=0), 0, lane(requests=0, tokens=0)),
        (lane(requests=0, tokens=0), 500, lane(requests=0.5, tokens=5)),
        (lane(requests=0, tokens=0), 1, lane(requests=1 / 1000, tokens=1 / 100)),
        (lane(requests=59, tokens=595), 10_000, lane()),  # never past full
        (lane(requests=0, tokens=-20), 1_000, lane(requests=1, tokens=-10)),  # a debt refills
        (lane(requests=0, tokens=0), -5_000, lane(requests=0, tokens=0)),  # a clock behind
    ],
    ids=["no-time", "half-second", "one-ms", "capped", "debt", "clock-behind"],
)
def test_refill(start: LaneState, elapsed_ms: int, expected: LaneState) -> None:
    refilled = refill(start, LIMITS, T0 + elapsed_ms)
    assert refilled == dataclasses.replace(expected, updated_at=T0 + max(0, elapsed_ms))


def test_a_bucket_without_a_limit_keeps_its_level() -> None:
    start = lane(requests=3, tokens=7)
    assert refill(start, UNLIMITED, T0 + 60_000) == dataclasses.replace(
        start, updated_at=T0 + 60_000
    )


def test_a_grant_takes_a_slot_a_request_and_the_estimate() -> None:
    state, decision = acquire(lane(), LIMITS, 120, T0)
    assert decision == Grant(tokens=120, at=T0)
    assert state == lane(requests=59, tokens=480, in_flight=1)


@pytest.mark.parametrize(
    ("start", "estimate", "denied"),
    [
        # 100 tokens short at 10 a second: ten seconds.
        (lane(tokens=20), 120, Denied(WaitReason.TOKENS, T0 + 10_000)),
        # Half a request short at one a second: half a second.
        (lane(requests=0.5), 1, Denied(WaitReason.REQUESTS, T0 + 500)),
        # Both short: the longer wait wins.
        (lane(requests=0.5, tokens=0), 30, Denied(WaitReason.TOKENS, T0 + 3_000)),
        (lane(requests=0, tokens=599), 3, Denied(WaitReason.REQUESTS, T0 + 1_000)),
        # Owed tokens are paid back first.
        (lane(tokens=-10), 10, Denied(WaitReason.TOKENS, T0 + 2_000)),
    ],
    ids=["tokens", "requests", "both-tokens-longer", "both-requests-longer", "debt"],
)
def test_a_short_bucket_denies_and_pauses_the_lane_until_it_suffices(
    start: LaneState, estimate: int, denied: Denied
) -> None:
    state, decision = acquire(start, LIMITS, estimate, T0)
    assert decision == denied
    assert denied.ready_at is not None
    assert state == dataclasses.replace(start, paused_until=denied.ready_at)
    # At that time, the same call fits.
    _, retried = acquire(state, LIMITS, estimate, denied.ready_at)
    assert isinstance(retried, Grant)


def test_a_paused_lane_denies_until_the_pause_ends() -> None:
    start = lane(paused=T0 + 30_000)
    state, decision = acquire(start, LIMITS, 1, T0 + 1_000)
    assert decision == Denied(WaitReason.PAUSED, T0 + 30_000)
    assert state.in_flight == 0
    _, after = acquire(start, LIMITS, 1, T0 + 30_000)
    assert isinstance(after, Grant)


def test_a_full_lane_denies_without_taking_anything() -> None:
    start = lane(in_flight=2)
    state, decision = acquire(start, LIMITS, 10, T0)
    assert decision == Denied(WaitReason.CONCURRENCY, None)
    assert state == start


def test_an_estimate_beyond_a_minute_of_tokens_waits_for_a_full_bucket() -> None:
    state, decision = acquire(lane(), LIMITS, 5_000, T0)
    assert decision == Grant(tokens=600, at=T0)
    assert state.token_credit == 0


def test_an_unlimited_lane_always_grants_and_counts_calls_in_flight() -> None:
    state = full_lane(UNLIMITED, T0)
    for _ in range(1_000):
        state, decision = acquire(state, UNLIMITED, 10**9, T0)
        assert isinstance(decision, Grant)
    assert state == dataclasses.replace(full_lane(UNLIMITED, T0), in_flight=1_000)


def test_a_negative_estimate_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        acquire(lane(), LIMITS, -1, T0)


@pytest.mark.parametrize("field", ["max_concurrency", "requests_per_minute", "tokens_per_minute"])
def test_limits_below_one_are_refused(field: str) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        LaneLimits(**{field: 0})


@pytest.mark.parametrize(
    ("tokens_before", "estimate", "actual", "tokens_after"),
    [
        (400, 200, 150, 450),  # unused tokens come back
        (400, 200, 200, 400),  # an exact estimate changes nothing
        (400, 200, 250, 350),  # extra use is charged
        (0, 200, 900, -700),  # beyond what is left: the lane owes it
        (590, 200, 0, 600),  # never past full
    ],
    ids=["refund", "exact", "charge", "debt", "capped"],
)
def test_reconcile_settles_the_estimate(
    tokens_before: int, estimate: int, actual: int, tokens_after: int
) -> None:
    start = lane(tokens=tokens_before, in_flight=1)
    settled = reconcile(start, LIMITS, Grant(estimate, T0), actual, T0)
    assert settled == lane(tokens=tokens_after, in_flight=1)


def test_reconcile_refills_first_and_leaves_an_unlimited_bucket_alone() -> None:
    settled = reconcile(lane(tokens=0), LIMITS, Grant(10, T0), 10, T0 + 1_000)
    assert settled.token_credit == 10 * CREDIT_PER_UNIT
    unlimited = reconcile(lane(tokens=0), UNLIMITED, Grant(10, T0), 0, T0)
    assert unlimited.token_credit == 0


def test_reconcile_refuses_negative_usage() -> None:
    with pytest.raises(ValueError, match="negative"):
        reconcile(lane(), LIMITS, Grant(10, T0), -1, T0)


def test_release_frees_one_slot_and_never_goes_below_zero() -> None:
    assert release(lane(in_flight=2)) == lane(in_flight=1)
    assert release(lane(in_flight=0)) == lane(in_flight=0)


def test_a_pause_is_never_shortened() -> None:
    assert pause(lane(), T0 + 5_000).paused_until == T0 + 5_000
    assert pause(lane(paused=T0 + 9_000), T0 + 5_000).paused_until == T0 + 9_000


NOT_REPORTED = RateLimitWindow()


@pytest.mark.parametrize(
    ("requests", "tokens", "sent_at", "expected"),
    [
        # Nothing reported: nothing changes.
        (NOT_REPORTED, NOT_REPORTED, T0, lane()),
        # The provider has 30 requests left; 2 s since the call went out, it can have
        # regained two more, plus the fraction hidden by rounding down.
        (
            RateLimitWindow(60, 30, 30_000),
            NOT_REPORTED,
            T0 - 2_000,
            lane(requests=33 - 1 / CREDIT_PER_UNIT),
        ),
        (
            NOT_REPORTED,
            RateLimitWindow(600, 0, 60_000),
            T0,
            lane(tokens=1 - 1 / CREDIT_PER_UNIT),
        ),
        # The provider has more left than the lane believes: the lane keeps its view.
        (RateLimitWindow(60, 60, 0), RateLimitWindow(600, 600, 0), T0, lane()),
    ],
    ids=["nothing", "requests-lowered", "tokens-lowered", "provider-has-more"],
)
def test_throttle_caps_a_limited_bucket_at_the_providers_report(
    requests: RateLimitWindow, tokens: RateLimitWindow, sent_at: int, expected: LaneState
) -> None:
    assert throttle(lane(), LIMITS, requests, tokens, sent_at=sent_at, now=T0) == expected


@pytest.mark.parametrize(
    ("requests", "tokens", "paused_until"),
    [
        (RateLimitWindow(100, 0, 6_000), NOT_REPORTED, T0 + 6_000),
        (NOT_REPORTED, RateLimitWindow(1_000, 0, 12), T0 + 12),
        (RateLimitWindow(100, 0, 6_000), RateLimitWindow(1_000, 0, 9_000), T0 + 9_000),
        (RateLimitWindow(100, 1, 6_000), NOT_REPORTED, 0),  # something left: go on
        (RateLimitWindow(100, 0, None), NOT_REPORTED, 0),  # no reset given: no pause
    ],
    ids=["requests", "tokens", "both", "some-left", "no-reset"],
)
def test_throttle_pauses_a_lane_without_its_own_limit_until_the_reset(
    requests: RateLimitWindow, tokens: RateLimitWindow, paused_until: int
) -> None:
    start = full_lane(UNLIMITED, T0)
    throttled = throttle(start, UNLIMITED, requests, tokens, sent_at=T0, now=T0)
    assert throttled == dataclasses.replace(start, paused_until=paused_until)


def test_a_refund_the_provider_never_needed_is_corrected_by_the_next_headers() -> None:
    # Call 1 reserves 100 tokens and uses none: the provider stays full, the lane refills.
    state, first = acquire(lane(), LIMITS, 100, T0)
    assert isinstance(first, Grant)
    later = T0 + 10_000
    # Call 2 reserves and uses 100: the provider now has 500 left, and says so.
    state, second = acquire(state, LIMITS, 100, later)
    assert isinstance(second, Grant)
    # Call 1's refund lands on a lane that already refilled past its reservation.
    state = release(reconcile(state, LIMITS, first, 0, later))
    assert state.token_credit == FULL_TOKENS
    state = release(reconcile(state, LIMITS, second, 100, later))
    said = RateLimitWindow(600, 500, 10_000)
    state = throttle(state, LIMITS, NOT_REPORTED, said, sent_at=later, now=later)
    assert state.token_credit == 501 * CREDIT_PER_UNIT - 1
