"""The `CallSink` of a running service: what each call taught, into its lane.

Each call that reached the provider is settled in its lane (`Store.lane_settle`): the
real tokens settle the grant's estimate and free its slot, the `x-ratelimit-*`
headers throttle the lane, a 429 pauses it for every worker (its Retry-After, or a
growing backoff), and a run of server errors opens its breaker. Its usage is stored
already, with the call's record (`backroom.llm.spend`).
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
    """Settles each call's lane in `app`'s store, at `app`'s time."""

    def __init__(self, app: App, rng: random.Random | None = None) -> None:
        self._app = app
        self._rng = rng or random.Random()

    async def call_ended(self, report: CallReport) -> None:
        """Settle the call's lane grant with what it taught."""
        store = self._app.store
        now = self._app.clock.now()
        settlement = lane_settlement(report, self._rng.random())
        await store.lane_settle(report.job.lease, settlement, now)
        # The hook of counters, logs and traces: a refused call (429) used no tokens.
        refused = report.usage is None and report.lane_tokens == 0
        call = LlmCall(report.job, report.lane, report.sent_at, now, report.usage)
        self._app.telemetry.llm_call_ended(call, rate_limited=refused, until=report.pause_until)
