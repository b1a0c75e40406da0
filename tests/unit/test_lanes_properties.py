"""Lane properties over random call histories, with the mock provider's limiter as oracle.

Calls arrive at random times with random estimates, reach the provider at once, and
end in random order having used at most their estimate. Whatever happens: no more
calls in flight than allowed, buckets never above full and never below empty, and no
window of time granting more than a minute's limit allows plus one bucket. When
every call uses exactly its estimate, the provider's own limiter (the mock's, with
the same limits) admits every call the lane granted, and its headers never throttle
a lane that is the provider's only user. (Unused reservations refunded while the
provider's bucket was full can leave the lane believing in a little more than the
provider has: see `test_lanes_core` for how the headers correct that.)
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from backroom.core.lanes import (
    CREDIT_PER_UNIT,
    Grant,
    LaneLimits,
    LaneState,
    acquire,
    full_lane,
    reconcile,
    refill,
    release,
)
from backroom.llm.lanes import throttle_from_headers
from backroom.llm.mock.limits import ModelLimiter
from backroom.llm.ratelimit_headers import RateLimitSnapshot, parse_rate_limit_headers

T0 = 1_700_000_000_000


@dataclass(frozen=True)
class Arrive:
    """A call asks for `estimate` tokens and will use `share` of them."""

    estimate: int
    share: float


@dataclass(frozen=True)
class End:
    """The call at position `pick` (modulo the number in flight) ends."""

    pick: int


@dataclass
class InFlight:
    grant: Grant
    actual: int
    headers: RateLimitSnapshot


Step = tuple[int, Arrive | End]

steps = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=3_000),
        st.one_of(
            st.builds(Arrive, st.integers(0, 400), st.floats(0, 1)),
            st.builds(End, st.integers(0, 100)),
        ),
    ),
    max_size=80,
)
limits_strategy = st.builds(
    LaneLimits,
    max_concurrency=st.integers(1, 5),
    requests_per_minute=st.integers(1, 120),
    tokens_per_minute=st.integers(100, 3_000),
)


def check_buckets(state: LaneState, limits: LaneLimits) -> None:
    assert limits.requests_per_minute is not None and limits.tokens_per_minute is not None
    assert 0 <= state.request_credit <= limits.requests_per_minute * CREDIT_PER_UNIT
    assert 0 <= state.token_credit <= limits.tokens_per_minute * CREDIT_PER_UNIT
    assert 0 <= state.in_flight <= (limits.max_concurrency or 0)


def check_windows(granted_at: list[int], per_minute: int) -> None:
    """No stretch of time holds more grants than a full bucket plus its refill."""
    for first, start in enumerate(granted_at):
        for last in range(first, len(granted_at)):
            count = last - first + 1
            refill_credit = (granted_at[last] - start) * per_minute
            assert count * CREDIT_PER_UNIT <= per_minute * CREDIT_PER_UNIT + refill_credit


def play(limits: LaneLimits, history: list[Step], *, exact_estimates: bool) -> list[int]:
    """Run `history` on a lane and the mock's limiter; check as it goes; the grant times.

    Each ended call is settled as a worker does: reconciled, released, and throttled
    by the headers the provider sent when it admitted the call (a refused call used
    no tokens). With `exact_estimates`, every call uses all it reserved, and then the
    provider must admit every granted call, and its headers must never throttle.
    """
    provider = ModelLimiter(limits.requests_per_minute, limits.tokens_per_minute, T0)
    state = full_lane(limits, T0)
    now = T0
    in_flight: list[InFlight] = []
    granted_at: list[int] = []
    for advance, step in history:
        now += advance
        if isinstance(step, Arrive):
            state, decision = acquire(state, limits, step.estimate, now)
            if isinstance(decision, Grant):
                share = 1.0 if exact_estimates else step.share
                actual = int(decision.tokens * share)
                admitted = provider.admit(actual, now) is None
                assert admitted or not exact_estimates, "the provider refused a granted call"
                headers = parse_rate_limit_headers(provider.headers())
                in_flight.append(InFlight(decision, actual if admitted else 0, headers))
                granted_at.append(now)
        elif in_flight:
            call = in_flight.pop(step.pick % len(in_flight))
            settled = release(reconcile(state, limits, call.grant, call.actual, now))
            state = throttle_from_headers(
                settled, limits, call.headers, sent_at=call.grant.at, now=now
            )
            if exact_estimates:
                assert state == refill(settled, limits, now), "the only user was throttled"
        check_buckets(state, limits)
        assert state.in_flight == len(in_flight)
    return granted_at


@settings(max_examples=300, deadline=None)
@given(limits=limits_strategy, history=steps)
def test_a_lane_never_exceeds_its_limits(limits: LaneLimits, history: list[Step]) -> None:
    granted_at = play(limits, history, exact_estimates=False)
    assert limits.requests_per_minute is not None
    check_windows(granted_at, limits.requests_per_minute)


@settings(max_examples=300, deadline=None)
@given(limits=limits_strategy, history=steps)
def test_with_exact_estimates_the_provider_admits_every_granted_call(
    limits: LaneLimits, history: list[Step]
) -> None:
    play(limits, history, exact_estimates=True)
