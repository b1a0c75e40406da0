"""The worker with a lane's 429 backoff and breaker, under simulated time.

A task with a lane stands in for an LLM call and settles it as the `llm.respond`
handler's sink does: a 429 that names no wait, or a server error. Nothing here needs
real HTTP (for that, see test_llm_lane_health.py).
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from backroom import App, JobContext, JobState, RetryPolicy, SimClock, WorkerConfig, run_until_idle
from backroom.core.errors import LaneLimited, Retryable
from backroom.core.job import Job
from backroom.core.lane_health import CallOutcome, breaker_cooldown_ms
from backroom.core.lane_settlement import LaneSettlement
from backroom.core.lanes import BREAKER_THRESHOLD, LaneLimits, LaneRequest
from backroom.store.sqlite.store import SqliteStore

START = 1_700_000_000_000
LANE = "fake/model"
CALL_MS = 100


class FlakyProvider:
    """Refuses or fails the first `bad_calls` calls of the lane, then answers."""

    def __init__(self, clock: SimClock, bad_calls: int, outcome: CallOutcome) -> None:
        self.clock = clock
        self.bad_calls = bad_calls
        self.outcome = outcome
        self.started: list[int] = []

    async def call(self, app: App, ctx: JobContext) -> str:
        sent_at = self.clock.now()
        self.started.append(sent_at - START)
        await self.clock.sleep(CALL_MS)
        bad = len(self.started) <= self.bad_calls
        outcome = self.outcome if bad else CallOutcome.ANSWERED
        settled = LaneSettlement(LANE, sent_at, used_tokens=0, outcome=outcome, jitter=0.0)
        await app.store.lane_settle(ctx.job.lease, settled, self.clock.now())
        if bad and outcome is CallOutcome.RATE_LIMITED:
            raise LaneLimited("429 with no wait named")
        if bad:
            raise Retryable("503: the provider is down")
        return "answer"


def run_jobs(bad_calls: int, outcome: CallOutcome, jobs: int) -> tuple[FlakyProvider, list[Job]]:
    clock = SimClock(START)
    app = App(store=SqliteStore.from_url("sqlite://:memory:"), clock=clock)
    provider = FlakyProvider(clock, bad_calls, outcome)
    limits = LaneLimits(max_concurrency=1)

    @app.task("call", lane_request=lambda _: LaneRequest(LANE, limits, 1),
              retry=RetryPolicy(max_attempts=10, base_ms=10, cap_ms=10))  # fmt: skip
    async def call(ctx: JobContext, payload: Any) -> str:
        return await provider.call(app, ctx)

    async def main() -> list[Job]:
        async with app:
            submitted = [(await app.submit("call", n)).job for n in range(jobs)]
            await run_until_idle(app, WorkerConfig(concurrency=4, poll_interval_ms=1_000))
            return [await app.get(job.id) for job in submitted]

    return provider, clock.run(main())


def test_429s_without_a_wait_back_off_and_use_no_attempt() -> None:
    provider, (job,) = run_jobs(4, CallOutcome.RATE_LIMITED, 1)

    assert (job.state, job.attempt) == (JobState.SUCCEEDED, 1)
    gaps = [later - earlier for earlier, later in pairwise(provider.started)]
    # The lane's pause doubles from half a second (jitter at its lowest): never a fixed rate.
    assert len(gaps) == 4
    floors = [500, 1_000, 2_000, 4_000]
    assert all(gap >= CALL_MS + floor for gap, floor in zip(gaps, floors, strict=True))
    assert gaps == sorted(gaps)


def test_a_run_of_server_errors_opens_the_breaker_then_one_probe_closes_it() -> None:
    provider, jobs = run_jobs(BREAKER_THRESHOLD, CallOutcome.FAILED, 4)

    assert [job.state for job in jobs] == [JobState.SUCCEEDED] * 4
    failures, rest = provider.started[:BREAKER_THRESHOLD], provider.started[BREAKER_THRESHOLD:]
    # The failures come as fast as the retries allow; then the lane waits out its
    # cooldown, for every job, before the probe goes.
    assert failures[-1] < BREAKER_THRESHOLD * 2 * CALL_MS
    cooldown = breaker_cooldown_ms(BREAKER_THRESHOLD, 0.0)
    assert rest[0] >= failures[-1] + CALL_MS + cooldown
    # The probe answered: the breaker closed, and the rest ran back to back.
    assert [later - earlier for earlier, later in pairwise(rest)] == [CALL_MS] * 3
