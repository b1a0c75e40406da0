"""What one call taught its lane, and the lane after settling it (pure).

A call granted by `backroom.core.lanes.acquire` ends with a settlement: the tokens
the provider really counted settle the grant's estimate, the call's concurrency slot
is freed, the provider's rate-limit report throttles the lane, and a 429's
Retry-After pauses it. A store applies `settle` to the lane's shared state.
"""

from __future__ import annotations

from dataclasses import dataclass

from backroom.core.lane_health import CallOutcome, after_call
from backroom.core.lane_throttle import ProviderWindow, throttle
from backroom.core.lanes import (
    Grant,
    LaneLimits,
    LaneState,
    pause,
    reconcile,
    release,
)


@dataclass(frozen=True, slots=True)
class Unreported:
    """A provider limit the answer said nothing about."""

    remaining: int | None = None
    reset_ms: int | None = None


UNREPORTED = Unreported()


@dataclass(frozen=True, slots=True)
class LaneSettlement:
    """How one call in lane `lane`, sent at `sent_at` (ms since the epoch), went.

    `used_tokens` is what the provider counted against the lane's tokens per minute
    (0 for a refused call; None when unknown, which keeps the estimate charged).
    `requests` and `tokens` are the provider's report of its limits; `pause_until`
    is set by a 429's Retry-After: no call of the lane starts before it. `outcome`
    feeds the lane's backoff and breaker (`backroom.core.lane_health`), `jitter` (in
    [0, 1), drawn by the caller) picks their pause within its range.
    """

    lane: str
    sent_at: int
    used_tokens: int | None = None
    requests: ProviderWindow = UNREPORTED
    tokens: ProviderWindow = UNREPORTED
    pause_until: int | None = None
    outcome: CallOutcome = CallOutcome.ANSWERED
    jitter: float = 0.5


def settle(
    state: LaneState,
    limits: LaneLimits,
    settlement: LaneSettlement,
    granted_tokens: int | None,
    now: int,
) -> LaneState:
    """The lane after `settlement`; `granted_tokens` is the call's grant, if still held.

    A grant already settled (or lost with its lease) is not settled again, but what
    the provider reported still throttles and pauses the lane. The call's outcome
    first moves the lane's backoff and breaker (`after_call`); a Retry-After
    (`pause_until`) is a floor of the pause, and a reset header of an emptied window
    lengthens the pause only when there is no Retry-After.
    """
    if granted_tokens is not None:
        if settlement.used_tokens is not None:
            grant = Grant(granted_tokens, settlement.sent_at)
            state = reconcile(state, limits, grant, settlement.used_tokens, now)
        state = release(state)
    state = after_call(
        state,
        settlement.outcome,
        sent_at=settlement.sent_at,
        retry_after_until=settlement.pause_until,
        jitter=settlement.jitter,
        now=now,
    )
    state = throttle(
        state,
        limits,
        settlement.requests,
        settlement.tokens,
        sent_at=settlement.sent_at,
        now=now,
        reset_pauses=settlement.pause_until is None,
    )
    if settlement.pause_until is not None:
        state = pause(state, settlement.pause_until)
    return state
