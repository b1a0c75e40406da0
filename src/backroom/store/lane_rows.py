"""Lanes and usage as table rows, and the lane arithmetic both SQL backends share.

A lane's row (`lane_states`) holds its limits as last configured, its two buckets,
its pause and the token estimate of its last call; its calls in flight are counted
from the running jobs that hold a grant, never stored, so no crash can leak a slot.
Each backend locks the row, reads it with that count, lets `lane_decision` or
`lane_settled` compute the new state (the core's functions), and writes it back.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from backroom.core.job import JSON
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
from backroom.core.usage import AttemptUsage, UsageTotals, day_label
from backroom.store.records import LaneStatus, UsageGroup, UsageGrouping
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


def usage_columns(usage: AttemptUsage) -> tuple[JSON, ...]:
    """The values of `USAGE_COLUMNS` for one attempt's usage."""
    return (
        usage.job_id,
        usage.attempt,
        usage.tenant,
        usage.model,
        usage.prompt_version,
        usage.input_tokens,
        usage.cached_tokens,
        usage.output_tokens,
        usage.cost_pico_usd,
        usage.at,
    )


USAGE_COLUMNS = (
    "job_id",
    "attempt",
    "tenant",
    "model",
    "prompt_version",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "cost_pico_usd",
    "at",
)
"""The columns of `llm_usage`, in the order `usage_columns` gives their values."""


def usage_from_row(row: Row) -> AttemptUsage:
    """The `AttemptUsage` a row of `llm_usage` holds."""
    return AttemptUsage(**{column: row[column] for column in USAGE_COLUMNS})


TOTALS_SELECT = """count(*) AS calls,
       COALESCE(sum(input_tokens), 0) AS input_tokens,
       COALESCE(sum(cached_tokens), 0) AS cached_tokens,
       COALESCE(sum(output_tokens), 0) AS output_tokens,
       COALESCE(sum(cost_pico_usd), 0) AS cost_pico_usd"""
"""The select list that sums `llm_usage` rows into `usage_totals_from_row`'s columns."""


def usage_totals_from_row(row: Row) -> UsageTotals:
    """The totals a `TOTALS_SELECT` row holds (PostgreSQL sums to numeric: made int)."""
    return UsageTotals(
        calls=int(row["calls"]),
        input_tokens=int(row["input_tokens"]),
        cached_tokens=int(row["cached_tokens"]),
        output_tokens=int(row["output_tokens"]),
        cost_pico_usd=int(row["cost_pico_usd"]),
    )


def usage_group_from_row(row: Row, grouping: UsageGrouping) -> UsageGroup:
    """One group of a usage report: `row` has `TOTALS_SELECT`, `grouped` and `tenant`.

    `grouped` is the model, or the start of the day in ms for a report by day.
    """
    grouped = row["grouped"]
    key = day_label(int(grouped)) if grouping is UsageGrouping.DAY else str(grouped)
    return UsageGroup(row["tenant"], key, usage_totals_from_row(row))
