"""Lanes as table rows, and the lane arithmetic both SQL backends share.

A lane's row (`lane_states`) holds its limits as last configured, its two buckets,
its pause, its 429 and failure streaks and the token estimate of its last call; its
calls in flight are counted from the running jobs that hold a grant, never stored, so
no crash can leak a slot.
Each backend locks the row, reads it with that count, lets `lane_decision` or
`lane_settled` compute the new state (the core's functions), and writes it back.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from backroom.core.lane_settlement import LaneSettlement, settle
from backroom.core.lanes import (
    Denied,
    Grant,
    LaneLimits,
    LaneRequest,
    LaneState,
    acquire,
    full_lane,
    refill,
)
from backroom.store.records import LaneStatus
from backroom.store.rows import Row


def lane_limits_from_row(row: Row) -> LaneLimits:
    """The limits a `lane_states` row was last written with."""
    return LaneLimits(
        max_concurrency=row["max_concurrency"],
        requests_per_minute=row["requests_per_minute"],
        tokens_per_minute=row["tokens_per_minute"],
    )


def lane_state_from_row(row: Row, in_flight: int) -> LaneState:
    """The `LaneState` a `lane_states` row holds, with `in_flight` calls counted."""
    return LaneState(
        request_credit=row["request_credit"],
        token_credit=row["token_credit"],
        in_flight=in_flight,
        paused_until=row["paused_until"],
        updated_at=row["updated_at"],
        refusal_streak=row["refusal_streak"],
        failure_streak=row["failure_streak"],
    )


def lane_status(row: Row, in_flight: int, now: int) -> LaneStatus:
    """A lane as `Store.lanes` reports it: refilled to `now`."""
    limits = lane_limits_from_row(row)
    state = refill(lane_state_from_row(row, in_flight), limits, now)
    return LaneStatus(row["name"], limits, state)


@dataclasses.dataclass(frozen=True, slots=True)
class LaneWrite:
    """A lane's row as it is to be written back."""

    name: str
    limits: LaneLimits
    state: LaneState
    call_tokens: int

    def columns(self) -> tuple[Any, ...]:
        """The values of `LANE_COLUMNS`, in that order."""
        return (
            self.name,
            self.limits.max_concurrency,
            self.limits.requests_per_minute,
            self.limits.tokens_per_minute,
            self.state.request_credit,
            self.state.token_credit,
            self.state.paused_until,
            self.state.updated_at,
            self.call_tokens,
            self.state.refusal_streak,
            self.state.failure_streak,
        )


LANE_COLUMNS = (
    "name",
    "max_concurrency",
    "requests_per_minute",
    "tokens_per_minute",
    "request_credit",
    "token_credit",
    "paused_until",
    "updated_at",
    "call_tokens",
    "refusal_streak",
    "failure_streak",
)
"""The columns of `lane_states`, in the order `LaneWrite.columns` gives their values."""


def lane_decision(
    row: Row | None, in_flight: int, request: LaneRequest, now: int
) -> tuple[LaneWrite, Grant | Denied]:
    """What `acquire` makes of a lane's row (None: a new lane, full) for one call.

    The request's limits are the caller's config, and become the lane's.
    """
    limits = request.limits
    state = full_lane(limits, now) if row is None else lane_state_from_row(row, in_flight)
    state, decision = acquire(state, limits, request.estimated_tokens, now)
    return LaneWrite(request.lane, limits, state, request.estimated_tokens), decision


def lane_settled(
    row: Row, in_flight: int, settlement: LaneSettlement, granted_tokens: int | None, now: int
) -> LaneWrite:
    """A lane's row after `settle`, under the limits it was last written with."""
    limits = lane_limits_from_row(row)
    state = settle(lane_state_from_row(row, in_flight), limits, settlement, granted_tokens, now)
    return LaneWrite(row["name"], limits, state, row["call_tokens"])
