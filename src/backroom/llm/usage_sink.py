"""The `CallSink` of a running service: usage into the store, lessons into the lane.

Each call that reached the provider leaves two writes: its usage (keyed by job and
attempt, so a repeat replaces rather than adds) and its settlement in the lane
(`Store.lane_settle`): the real tokens settle the grant's estimate and free its
slot, the `x-ratelimit-*` headers throttle the lane, a 429 pauses it for every
worker (its Retry-After, or a growing backoff), and a run of server errors opens its
breaker.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from backroom.app import App
from backroom.core.lane_settlement import LaneSettlement
from backroom.telemetry import LlmCall

if TYPE_CHECKING:
    from backroom.llm.task import CallReport


def lane_settlement(report: CallReport, jitter: float = 0.5) -> LaneSettlement:
    """What a call's report tells its lane; `jitter` (in [0, 1)) spreads its pauses."""
    return LaneSettlement(
        lane=report.lane,
        sent_at=report.sent_at,
        used_tokens=report.lane_tokens,
        requests=report.rate_limits.requests,
        tokens=report.rate_limits.tokens,
        pause_until=report.pause_until,
        outcome=report.outcome,
        jitter=jitter,
    )


class StoreCallSink:
    """Records each call's usage and settles its lane in `app`'s store, at `app`'s time."""

    def __init__(self, app: App, rng: random.Random | None = None) -> None:
        self._app = app
        self._rng = rng or random.Random()

    async def call_ended(self, report: CallReport) -> None:
        """Store the call's usage, then settle its lane grant with what it taught."""
        store = self._app.store
        if report.usage is not None:
            await store.record_usage(report.usage)
        now = self._app.clock.now()
        settlement = lane_settlement(report, self._rng.random())
        await store.lane_settle(report.job.lease, settlement, now)
        # The hook of counters, logs and traces: a refused call (429) used no tokens.
        refused = report.usage is None and report.lane_tokens == 0
        call = LlmCall(report.job, report.lane, report.sent_at, now, report.usage)
        self._app.telemetry.llm_call_ended(call, rate_limited=refused, until=report.pause_until)
