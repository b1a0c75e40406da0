"""How a lane reacts to the way its calls end: backoff after 429s, a breaker after errors.

Pure: the randomness of the jitter is handed in (`jitter`, a number in [0, 1)). Two
streaks are kept on the lane, shared by every worker (`LaneState`):

    refusals   429s in a row. A 429 that names a wait (Retry-After, in any of its
               forms) pauses the lane for at least that long: the wait is a floor.
               One that names none pauses it for an exponential backoff with jitter
               (about 1 s, 2 s, 4 s ... up to a minute), never for a fixed second.
               From the second 429 in a row on, the backoff applies under a
               Retry-After too: the provider's wait did not suffice.
    failures   server errors and timeouts in a row. At `BREAKER_THRESHOLD` the
               lane's breaker opens: the lane pauses for a cooldown (5 s, doubling
               with each further failure, up to two minutes, jittered) for every
               worker, then lets one call through as a probe (`acquire` shuts the
               lane behind it); the probe's answer closes the breaker, its failure
               opens it again, for longer.

An answered call (any answer but a 429 or a server error) ends both streaks. Calls
that were already on their way when the lane paused are often refused in a burst: a
429 to a call sent before the lane's current pause ends (so before the pause was
set) counts once, with the one that set it, and does not grow the backoff. Every
failure counts towards the breaker: the cooldown is capped, and a probe, sent while
the lane holds shut behind it, must count.
"""

from __future__ import annotations

import dataclasses
import enum

from backroom.core.lanes import BREAKER_THRESHOLD, LaneState, pause

RATE_LIMIT_BACKOFF_BASE_MS = 1_000
RATE_LIMIT_BACKOFF_CAP_MS = 60_000
BREAKER_COOLDOWN_BASE_MS = 5_000
BREAKER_COOLDOWN_CAP_MS = 120_000


class CallOutcome(enum.StrEnum):
    """How a call ended, as far as its lane's health is concerned."""

    ANSWERED = "answered"
    """The provider answered (a success, or an error that is the request's fault)."""
    RATE_LIMITED = "rate_limited"
    """A 429 for the rate limit."""
    FAILED = "failed"
    """A server error, a timeout or a lost connection: the provider may be down."""


def jittered(wait_ms: int, jitter: float) -> int:
    """Equal jitter: half of `wait_ms`, plus `jitter` (in [0, 1)) of the other half.

    >>> [jittered(1000, j) for j in (0.0, 0.5, 0.999)]
    [500, 750, 999]
    """
    half = wait_ms // 2
    return half + int((wait_ms - half) * jitter)


def _doubling(base_ms: int, cap_ms: int, step: int) -> int:
    """`base_ms` doubled `step` times (0: the base), at most `cap_ms`."""
    # The exponent is bounded first: a long streak never builds a huge integer.
    return min(cap_ms, base_ms << min(max(step, 0), 32))


def rate_limit_backoff_ms(refusals: int, jitter: float) -> int:
    """The pause after the `refusals`-th 429 in a row (1-based) that named no wait.

    >>> [rate_limit_backoff_ms(n, 0.0) for n in (1, 2, 3, 7, 8, 50)]
    [500, 1000, 2000, 30000, 30000, 30000]
    """
    raw = _doubling(RATE_LIMIT_BACKOFF_BASE_MS, RATE_LIMIT_BACKOFF_CAP_MS, refusals - 1)
    return jittered(raw, jitter)


def breaker_cooldown_ms(failures: int, jitter: float) -> int:
    """The pause after the `failures`-th failure in a row, once the breaker is open.

    >>> [breaker_cooldown_ms(n, 0.0) for n in (5, 6, 7, 10, 30)]
    [2500, 5000, 10000, 60000, 60000]
    """
    step = failures - BREAKER_THRESHOLD
    return jittered(_doubling(BREAKER_COOLDOWN_BASE_MS, BREAKER_COOLDOWN_CAP_MS, step), jitter)


def _rate_limited(
    state: LaneState, retry_after_until: int | None, jitter: float, now: int
) -> LaneState:
    refusals = state.refusal_streak + 1
    state = dataclasses.replace(state, refusal_streak=refusals)
    if retry_after_until is not None:
        state = pause(state, retry_after_until)
        if refusals == 1:
            return state  # the provider's wait, exactly: it knows best the first time
        return pause(state, now + rate_limit_backoff_ms(refusals - 1, jitter))
    return pause(state, now + rate_limit_backoff_ms(refusals, jitter))


def _failed(state: LaneState, jitter: float, now: int) -> LaneState:
    failures = state.failure_streak + 1
    state = dataclasses.replace(state, failure_streak=failures)
    if failures < BREAKER_THRESHOLD:
        return state
    cooldown_until = now + breaker_cooldown_ms(failures, jitter)
    if failures > BREAKER_THRESHOLD:
        # Open already: the pause is the hold behind a probe, which has now failed.
        return dataclasses.replace(state, paused_until=cooldown_until)
    return pause(state, cooldown_until)


def after_call(
    state: LaneState,
    outcome: CallOutcome,
    *,
    sent_at: int,
    retry_after_until: int | None,
    jitter: float,
    now: int,
) -> LaneState:
    """The lane after a call sent at `sent_at` ended with `outcome` at `now`.

    `retry_after_until` is when a 429's Retry-After ends (None: it named no wait);
    `jitter`, in [0, 1), picks the pause within its jitter range.
    """
    if outcome is CallOutcome.ANSWERED:
        if state.failure_streak >= BREAKER_THRESHOLD:
            # The probe got through: the breaker closes, and its hold ends now.
            state = dataclasses.replace(state, paused_until=min(state.paused_until, now))
        return dataclasses.replace(state, refusal_streak=0, failure_streak=0)
    if outcome is CallOutcome.FAILED:
        return _failed(state, jitter, now)
    if sent_at < state.paused_until:
        # On its way before the lane paused: the same burst as the 429 that paused it.
        # Its own Retry-After still holds.
        return state if retry_after_until is None else pause(state, retry_after_until)
    return _rate_limited(state, retry_after_until, jitter, now)
