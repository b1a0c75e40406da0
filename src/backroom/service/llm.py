"""The service's LLM lanes as plain data, free of any web framework.

A lane's document is built here; lanes are listed, paused and resumed by
`backroom.service.queues`, and usage reports are `backroom.service.usage`.
"""

from __future__ import annotations

from typing import Any

from backroom.core.lanes import BREAKER_THRESHOLD, CREDIT_PER_UNIT
from backroom.service.documents import iso
from backroom.store.records import LaneStatus

__all__ = ["lane_document"]


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
        "rate_limited_in_a_row": state.refusal_streak,
        "failed_in_a_row": state.failure_streak,
        "breaker_open": state.failure_streak >= BREAKER_THRESHOLD,
    }
