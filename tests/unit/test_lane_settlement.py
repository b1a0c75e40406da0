"""Settling a call in its lane: tokens reconciled, slot freed, headers throttle, 429 pauses."""

from __future__ import annotations

from backroom.core.lane_settlement import LaneSettlement, settle
from backroom.core.lanes import CREDIT_PER_UNIT, LaneLimits, LaneState
from backroom.llm.ratelimit_headers import RateLimitWindow

T0 = 1_700_000_000_000
LIMITS = LaneLimits(max_concurrency=2, requests_per_minute=60, tokens_per_minute=600)


def lane(tokens: int, in_flight: int = 1) -> LaneState:
    """A lane at T0 holding 59 requests and `tokens` tokens."""
    return LaneState(59 * CREDIT_PER_UNIT, tokens * CREDIT_PER_UNIT, in_flight, 0, T0)


def test_a_call_that_used_less_than_its_estimate_gives_the_rest_back() -> None:
    settled = settle(lane(500), LIMITS, LaneSettlement("x/y", T0, used_tokens=40), 100, T0)

    assert settled.token_credit == 560 * CREDIT_PER_UNIT
    assert settled.in_flight == 0


def test_a_call_that_used_more_than_its_estimate_owes_the_rest() -> None:
    settled = settle(lane(10), LIMITS, LaneSettlement("x/y", T0, used_tokens=150), 100, T0)

    assert settled.token_credit == -40 * CREDIT_PER_UNIT


def test_an_unknown_usage_keeps_the_estimate_charged() -> None:
    settled = settle(lane(500), LIMITS, LaneSettlement("x/y", T0), 100, T0)

    assert settled.token_credit == 500 * CREDIT_PER_UNIT
    assert settled.in_flight == 0


def test_a_429_pauses_the_lane_and_gives_the_whole_estimate_back() -> None:
    refused = LaneSettlement("x/y", T0, used_tokens=0, pause_until=T0 + 2_000)
    settled = settle(lane(500), LIMITS, refused, 100, T0)

    assert settled.paused_until == T0 + 2_000
    assert settled.token_credit == 600 * CREDIT_PER_UNIT


def test_without_a_grant_only_the_report_counts() -> None:
    report = LaneSettlement(
        "x/y",
        T0,
        used_tokens=40,
        tokens=RateLimitWindow(limit=600, remaining=100, reset_ms=50_000),
        pause_until=T0 + 1_000,
    )
    settled = settle(lane(500), LIMITS, report, None, T0)

    # No reconciling, no slot freed; the provider's 100 tokens left cap the bucket.
    assert settled.in_flight == 1
    assert settled.token_credit == 101 * CREDIT_PER_UNIT - 1
    assert settled.paused_until == T0 + 1_000


UNLIMITED = LaneLimits()
EMPTY_WINDOW = RateLimitWindow(limit=600, remaining=0, reset_ms=60_000)


def test_a_retry_after_is_not_stretched_by_the_reset_of_an_empty_window() -> None:
    # The case: Retry-After 5.6 s, tokens reported exhausted until a reset 60 s away.
    refused = LaneSettlement("x/y", T0, used_tokens=0, tokens=EMPTY_WINDOW, pause_until=T0 + 5_600)
    settled = settle(lane(0), UNLIMITED, refused, 100, T0)

    assert settled.paused_until == T0 + 5_600


def test_an_empty_window_without_a_retry_after_pauses_until_its_reset() -> None:
    answered = LaneSettlement("x/y", T0, used_tokens=100, tokens=EMPTY_WINDOW)
    settled = settle(lane(0), UNLIMITED, answered, 100, T0)

    assert settled.paused_until == T0 + 60_000


def test_a_reset_of_a_window_with_room_left_does_not_pause() -> None:
    window = RateLimitWindow(limit=600, remaining=1, reset_ms=60_000)
    answered = LaneSettlement("x/y", T0, used_tokens=100, tokens=window)
    settled = settle(lane(0), UNLIMITED, answered, 100, T0)

    assert settled.paused_until == 0
