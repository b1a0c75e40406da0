"""Throttle a lane by what its provider reports is left (pure).

A response's rate-limit headers say how much of each provider limit remains. Where
the lane has the same limit, its bucket is lowered to the most the provider can
still hold; where it has none, a report of nothing left pauses it until the reset.
The lane arithmetic itself (refill, acquire, pause) is in `backroom.core.lanes`.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

from backroom.core.lanes import CREDIT_PER_UNIT, LaneLimits, LaneState, pause, refill


class ProviderWindow(Protocol):
    """One limit as a provider last reported it (`RateLimitWindow` is one)."""

    @property
    def remaining(self) -> int | None:
        """Whole units left, or None if not reported."""

    @property
    def reset_ms(self) -> int | None:
        """Milliseconds until the limit is back to full, or None if not reported."""


def _provider_ceiling(remaining: int, per_minute: int, sent_at: int, now: int) -> int:
    """The most credit the provider's bucket can hold at `now`, from its report.

    The report was made between `sent_at` and `now`, after the call was admitted;
    `remaining` is rounded down to whole units, and since then the provider's bucket
    can have refilled by at most the time elapsed since `sent_at`.
    """
    reported = (remaining + 1) * CREDIT_PER_UNIT - 1
    return reported + max(0, now - sent_at) * per_minute


def _throttled_credit(
    credit: int, window: ProviderWindow, per_minute: int | None, sent_at: int, now: int
) -> int:
    if window.remaining is None or per_minute is None:
        return credit
    return min(credit, _provider_ceiling(window.remaining, per_minute, sent_at, now))


def _pause_until_reset(
    state: LaneState, window: ProviderWindow, per_minute: int | None, now: int
) -> LaneState:
    """With no limit of its own, a lane waits out a provider limit reported as used up."""
    if per_minute is not None or window.remaining != 0 or window.reset_ms is None:
        return state
    return pause(state, now + window.reset_ms)


def throttle(
    state: LaneState,
    limits: LaneLimits,
    requests: ProviderWindow,
    tokens: ProviderWindow,
    *,
    sent_at: int,
    now: int,
    reset_pauses: bool = True,
) -> LaneState:
    """Slow the lane down when the provider has less left than the lane believes.

    `requests` and `tokens` are what a response to a call granted at `sent_at`
    reported. For a limit the lane has too, its bucket is lowered to the most the
    provider can still hold, so calls wait exactly until the provider has room: this
    changes nothing while the lane is the provider's only user, and catches up when
    someone else spends the same account. For a limit the lane lacks, a report of
    nothing left pauses the lane until the provider's reset, unless `reset_pauses` is
    False: when the provider named its own wait (a 429's Retry-After), that wait is
    the pause, and a reset of the whole window (often a minute away) must not
    stretch it.
    """
    state = refill(state, limits, now)
    rpm, tpm = limits.requests_per_minute, limits.tokens_per_minute
    state = dataclasses.replace(
        state,
        request_credit=_throttled_credit(state.request_credit, requests, rpm, sent_at, now),
        token_credit=_throttled_credit(state.token_credit, tokens, tpm, sent_at, now),
    )
    if not reset_pauses:
        return state
    state = _pause_until_reset(state, requests, rpm, now)
    return _pause_until_reset(state, tokens, tpm, now)
