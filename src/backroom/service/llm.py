"""The service's LLM operations, free of any web framework: a lane's document, usage reports.

Like every operation, each takes the `App` and a `Caller` and returns a `Reply`.
A usage report covers the caller's own tenant, or every tenant for an admin. Lanes are
listed, paused and resumed by `backroom.service.queues`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backroom.core.lanes import CREDIT_PER_UNIT
from backroom.core.usage import UsageTotals, day_start, next_day_start
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.documents import iso, usage_document
from backroom.service.replies import Reply, invalid_field
from backroom.store.records import LaneStatus, UsageGroup, UsageGrouping, UsageQuery

__all__ = ["UsageGrouping", "UsageRange", "lane_document", "usage_report"]


@dataclass(frozen=True, slots=True)
class UsageRange:
    """A usage report as asked for: calls that ended in `[since, until)` (ms since the
    epoch; by default the current UTC day), grouped."""

    since: int | None = None
    until: int | None = None
    group_by: UsageGrouping = UsageGrouping.MODEL


def _units_left(credit: int, per_minute: int | None) -> int | None:
    """Whole requests or tokens a bucket holds (negative: owed); None without a limit."""
    return None if per_minute is None else credit // CREDIT_PER_UNIT


def lane_document(lane: LaneStatus, now: int) -> dict[str, Any]:
    """One lane: its limits, its calls in flight, what its buckets hold, its pause."""
    limits, state = lane.limits, lane.state
    return {
        "name": lane.name,
        "limits": {
            "max_concurrency": limits.max_concurrency,
            "requests_per_minute": limits.requests_per_minute,
            "tokens_per_minute": limits.tokens_per_minute,
        },
        "in_flight": state.in_flight,
        "requests_left": _units_left(state.request_credit, limits.requests_per_minute),
        "tokens_left": _units_left(state.token_credit, limits.tokens_per_minute),
        "paused_until": iso(state.paused_until) if state.paused_until > now else None,
    }


def _group_document(group: UsageGroup, grouping: UsageGrouping) -> dict[str, Any]:
    return {"tenant": group.tenant, str(grouping): group.key, **usage_document(group.totals)}


async def usage_report(app: AppParts, caller: Caller, asked: UsageRange) -> Reply:
    """Tokens and cost of the caller's calls (an admin's: every tenant's) in the range."""
    now = app.clock.now()
    since = day_start(now) if asked.since is None else asked.since
    until = next_day_start(now) if asked.until is None else asked.until
    if until <= since:
        return invalid_field(("query", "to"), "must be later than `from`")
    query = UsageQuery(since, until, asked.group_by, caller.scope)
    groups = await app.store.usage_groups(query)
    return Reply(
        200,
        {
            "from": iso(since),
            "to": iso(until),
            "group_by": str(asked.group_by),
            "groups": [_group_document(group, asked.group_by) for group in groups],
            "total": usage_document(sum((group.totals for group in groups), UsageTotals())),
        },
    )
