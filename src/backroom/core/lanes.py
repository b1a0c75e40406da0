"""Lanes: the shared rate limits of one provider model, as pure functions of `now`.

A lane (say `openai/gpt-4o-mini`) has up to three limits: concurrent calls, requests
per minute and tokens per minute. Every worker on every machine shares one
`LaneState`, kept in the store; these functions compute how it changes, and a store
may mirror them in SQL, since everything is integer arithmetic:

    refill       buckets regain `per_minute` units per minute, continuously, up to full
    acquire      a call takes a concurrency slot, one request and its estimated tokens,
                 or is told when the lane will have room (a short bucket pauses the lane)
    reconcile    the estimate is settled against the tokens the call really used
    release      the call's concurrency slot is freed
    pause        no call starts before a given time (a 429's Retry-After)
    throttle     what the provider says is left caps what the lane believes is left
                 (in `backroom.core.lane_throttle`)
    back off     a 429 that names no wait, or a run of server errors (the breaker),
                 pauses the lane for a growing time (in `backroom.core.lane_health`)

Each bucket's level is kept in 1/60,000ths of a unit (`CREDIT_PER_UNIT`): one
millisecond of refill then adds exactly `per_minute` credits, so no arithmetic needs
fractions. Buckets start full, as a provider's do.

While every call reaches the provider at once and uses exactly its estimate, the
provider's buckets hold at least what the lane's do, so it refuses no granted call.
Two gaps remain, both when the provider's bucket is full, which wastes refill: a call
still on its way has been charged by the lane but not yet by the provider, and a call
that used less than it reserved gets the rest back although the provider's full
bucket never lost it. The lane can then believe in a little more than the provider
has; the 429 that may follow pauses the lane, and the headers of every answer bring
the lane back in line (`throttle`). Charging at the end of a call instead would close
both gaps, but would stall lanes whose calls last longer than the limits' minute.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

MS_PER_MINUTE = 60_000
CREDIT_PER_UNIT = MS_PER_MINUTE
"""Credits in one request or one token: a minute's worth of milliseconds."""
BREAKER_THRESHOLD = 5
"""Server errors or timeouts in a row that open a lane's breaker."""
PROBE_HOLD_MS = 30_000
"""How long a lane with an open breaker stays shut behind the one call it let through
(its probe): the probe's answer ends the hold sooner, a probe lost with its worker
lets the next one through after it."""


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


@dataclass(frozen=True, slots=True)
class LaneLimits:
    """How hard a lane may be used; None means no limit of that kind."""

    max_concurrency: int | None = None
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None

    def __post_init__(self) -> None:
        limits = (self.max_concurrency, self.requests_per_minute, self.tokens_per_minute)
        if any(limit is not None and limit < 1 for limit in limits):
            raise ValueError(f"lane limits must be at least 1: {self}")


@dataclass(frozen=True, slots=True)
class LaneRequest:
    """What one call asks of its lane, named `lane`: a slot, a request, `estimated_tokens`.

    `limits` are the lane's as configured where the call is made: every worker applies
    its own config's limits to the shared state.
    """

    lane: str
    limits: LaneLimits
    estimated_tokens: int


@dataclass(frozen=True, slots=True)
class LaneState:
    """What a lane has left, as of `updated_at` (ms since the epoch).

    `request_credit` and `token_credit` are bucket levels in credits (see
    `CREDIT_PER_UNIT`); the token bucket may go below zero when calls used more
    tokens than they reserved, and then owes them. A bucket with no limit keeps
    whatever level it has and is never consulted. `paused_until` is 0 when the lane
    has never been paused. `refusal_streak` counts the 429s in a row and
    `failure_streak` the server errors and timeouts in a row (see
    `backroom.core.lane_health`): at `BREAKER_THRESHOLD` failures the lane's breaker is
    open, and each call it grants is a probe.
    """

    request_credit: int
    token_credit: int
    in_flight: int
    paused_until: int
    updated_at: int
    refusal_streak: int = 0
    failure_streak: int = 0


class WaitReason(enum.StrEnum):
    """Why a call may not start yet."""

    PAUSED = "paused"
    REQUESTS = "requests"
    TOKENS = "tokens"
    CONCURRENCY = "concurrency"


@dataclass(frozen=True, slots=True)
class Grant:
    """A call may start: it holds a slot, one request and `tokens` estimated tokens.

    `at` is when it was granted, which `throttle` needs to date the provider's report.
    """

    tokens: int
    at: int


@dataclass(frozen=True, slots=True)
class Denied:
    """A call may not start: try again at `ready_at`.

    `ready_at` is None for `CONCURRENCY`: a slot frees only when a running call ends,
    and no one knows when that will be; so is it for `PAUSED` behind an open breaker,
    whose probe's answer ends the pause.
    """

    reason: WaitReason
    ready_at: int | None


def full_lane(limits: LaneLimits, now: int) -> LaneState:
    """A new lane: both buckets full, no call in flight, never paused."""
    return LaneState(
        request_credit=_capacity(limits.requests_per_minute),
        token_credit=_capacity(limits.tokens_per_minute),
        in_flight=0,
        paused_until=0,
        updated_at=now,
    )


def _capacity(per_minute: int | None) -> int:
    return 0 if per_minute is None else per_minute * CREDIT_PER_UNIT


def _refilled(credit: int, per_minute: int | None, elapsed_ms: int) -> int:
    if per_minute is None:
        return credit
    return min(_capacity(per_minute), credit + elapsed_ms * per_minute)


def refill(state: LaneState, limits: LaneLimits, now: int) -> LaneState:
    """The lane at `now`: each bucket gains `per_minute` credits per elapsed ms, up to full.

    A `now` earlier than `updated_at` (another worker's clock running behind) adds nothing.
    """
    elapsed_ms = max(0, now - state.updated_at)
    return dataclasses.replace(
        state,
        request_credit=_refilled(state.request_credit, limits.requests_per_minute, elapsed_ms),
        token_credit=_refilled(state.token_credit, limits.tokens_per_minute, elapsed_ms),
        updated_at=max(now, state.updated_at),
    )


def _wait_ms(credit: int, units: int, per_minute: int | None) -> int:
    """How long until a bucket holds `units` (0: it does now, or it has no limit)."""
    if per_minute is None:
        return 0
    return max(0, _ceil_div(units * CREDIT_PER_UNIT - credit, per_minute))


def _short_bucket(
    state: LaneState, limits: LaneLimits, tokens: int
) -> tuple[WaitReason, int] | None:
    """Which bucket lacks what the call needs and when both will hold it; None if they do."""
    request_wait = _wait_ms(state.request_credit, 1, limits.requests_per_minute)
    token_wait = _wait_ms(state.token_credit, tokens, limits.tokens_per_minute)
    if request_wait == token_wait == 0:
        return None
    reason = WaitReason.TOKENS if token_wait > request_wait else WaitReason.REQUESTS
    return reason, state.updated_at + max(request_wait, token_wait)


def acquire(
    state: LaneState, limits: LaneLimits, estimated_tokens: int, now: int
) -> tuple[LaneState, Grant | Denied]:
    """Take what one call needs, or say when to try again; the lane as it is afterwards.

    An estimate larger than a whole minute's tokens is capped at that: the call then
    waits for a full bucket, and the provider judges whether it fits. When a bucket is
    short the lane is paused until the call would fit, so later calls queue behind it
    instead of taking the refill away from it. A pause never ends earlier than it was.
    A lane whose breaker is open grants one call, its probe, and shuts behind it for
    `PROBE_HOLD_MS`.
    """
    if estimated_tokens < 0:
        raise ValueError("a token estimate cannot be negative")
    if limits.tokens_per_minute is not None:
        estimated_tokens = min(estimated_tokens, limits.tokens_per_minute)
    state = refill(state, limits, now)
    if state.paused_until > now:
        # Behind an open breaker the pause may end early (its probe answers): the job
        # then waits for the store's word, not for the pause's end.
        breaker_open = state.failure_streak >= BREAKER_THRESHOLD
        return state, Denied(WaitReason.PAUSED, None if breaker_open else state.paused_until)
    short = _short_bucket(state, limits, estimated_tokens)
    if short is not None:
        reason, ready_at = short
        return pause(state, ready_at), Denied(reason, ready_at)
    if limits.max_concurrency is not None and state.in_flight >= limits.max_concurrency:
        return state, Denied(WaitReason.CONCURRENCY, None)
    taken = dataclasses.replace(
        state,
        request_credit=state.request_credit - _taken(1, limits.requests_per_minute),
        token_credit=state.token_credit - _taken(estimated_tokens, limits.tokens_per_minute),
        in_flight=state.in_flight + 1,
    )
    if taken.failure_streak >= BREAKER_THRESHOLD:
        taken = pause(taken, now + PROBE_HOLD_MS)
    return taken, Grant(estimated_tokens, now)


def _taken(units: int, per_minute: int | None) -> int:
    return 0 if per_minute is None else units * CREDIT_PER_UNIT


def reconcile(
    state: LaneState, limits: LaneLimits, grant: Grant, actual_tokens: int, now: int
) -> LaneState:
    """Settle a grant's estimate against the tokens the call really used.

    Unused tokens go back to the bucket (never past full); tokens used beyond the
    estimate are taken from it, which may leave it owing. The concurrency slot is
    freed separately, by `release`.
    """
    if actual_tokens < 0:
        raise ValueError("a call cannot use a negative number of tokens")
    state = refill(state, limits, now)
    if limits.tokens_per_minute is None:
        return state
    settled = state.token_credit + (grant.tokens - actual_tokens) * CREDIT_PER_UNIT
    return dataclasses.replace(
        state, token_credit=min(_capacity(limits.tokens_per_minute), settled)
    )


def release(state: LaneState) -> LaneState:
    """Free one concurrency slot (a call ended, however it ended)."""
    return dataclasses.replace(state, in_flight=max(0, state.in_flight - 1))


def pause(state: LaneState, until: int) -> LaneState:
    """No call starts before `until`; a pause already longer is kept."""
    return dataclasses.replace(state, paused_until=max(state.paused_until, until))
