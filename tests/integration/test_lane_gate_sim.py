"""The worker's lane gate under simulated time: lanes, 429s and daily budgets.

A task with a lane stands in for an LLM call: it takes `CALL_MS` and settles its
grant as the `llm.respond` handler's sink does. Nothing here needs real HTTP.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any

from backroom import App, JobContext, JobState, SimClock, WorkerConfig, run_until_idle
from backroom.core.errors import LaneLimited
from backroom.core.job import AttemptOutcome, Job
from backroom.core.lane_settlement import LaneSettlement
from backroom.core.lanes import LaneLimits, LaneRequest
from backroom.core.usage import DAY_MS, AttemptUsage, DailyBudget, OverBudget, next_day_start
from backroom.runtime.lane_gate import BUDGET_EXHAUSTED, MAX_RATE_LIMIT_DEFERRALS
from backroom.service.api_keys import issue_key
from backroom.store.sqlite.store import SqliteStore

START = 1_700_000_000_000
LANE = "fake/model"
CALL_MS = 100
TOKENS = 10
BUDGET = DailyBudget.of_usd(Decimal("1"))


class FakeProvider:
    """Calls in one lane: when each started, and how many ran at once at most."""

    def __init__(self, clock: SimClock, limits: LaneLimits) -> None:
        self.clock = clock
        self.limits = limits
        self.started: list[int] = []
        self.running = 0
        self.most_running = 0
        self.refusals = 0

    def lane_request(self, payload: Any) -> LaneRequest:
        return LaneRequest(LANE, self.limits, TOKENS)

    async def call(self, app: App, ctx: JobContext, payload: Any) -> str:
        sent_at = self.clock.now()
        self.started.append(sent_at - START)
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        await self.clock.sleep(CALL_MS)
        self.running -= 1
        if payload == "always refused" or (payload == "refuse once" and self.refusals == 0):
            self.refusals += 1
            pause_until = self.clock.now() + 5_000
            refused = LaneSettlement(LANE, sent_at, used_tokens=0, pause_until=pause_until)
            await app.store.lane_settle(ctx.job.lease, refused, self.clock.now())
            raise LaneLimited("429: slow down", after_ms=5_000)
        if payload == "spend":
            spent = AttemptUsage(
                ctx.job.id, ctx.attempt, ctx.job.tenant, "model", None, 1, 0, 1,
                BUDGET.limit_pico_usd, self.clock.now(), lease_token=ctx.job.lease_token,
            )  # fmt: skip
            await app.store.record_usage(spent)
        settled = LaneSettlement(LANE, sent_at, used_tokens=TOKENS)
        await app.store.lane_settle(ctx.job.lease, settled, self.clock.now())
        return "answer"


def make_app(clock: SimClock, limits: LaneLimits) -> tuple[App, FakeProvider]:
    app = App(store=SqliteStore.from_url("sqlite://:memory:"), clock=clock)
    provider = FakeProvider(clock, limits)

    @app.task("call", lane_request=provider.lane_request)
    async def call(ctx: JobContext, payload: Any) -> str:
        return await provider.call(app, ctx, payload)

    return app, provider


def run(clock: SimClock, app: App, scenario: Callable[[], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with app:
            return await scenario()

    return clock.run(main())


async def submit_and_run(
    app: App, payloads: list[Any], config: WorkerConfig | None = None, tenant: str = "acme"
) -> list[Job]:
    submitted = [(await app.submit("call", payload, tenant=tenant)).job for payload in payloads]
    await run_until_idle(app, config or WorkerConfig(concurrency=8, poll_interval_ms=1_000))
    return [await app.get(job.id) for job in submitted]


def test_calls_start_only_as_fast_as_the_lanes_requests_allow() -> None:
    clock = SimClock(START)
    # The bucket holds two requests and refills one every 30 s.
    app, provider = make_app(clock, LaneLimits(requests_per_minute=2))

    jobs = run(clock, app, lambda: submit_and_run(app, ["a", "b", "c", "d"]))

    assert provider.started == [0, 0, 30_000, 60_000]
    assert [job.state for job in jobs] == [JobState.SUCCEEDED] * 4
    # Waiting for the lane used no attempt.
    assert [job.attempt for job in jobs] == [1, 1, 1, 1]


def test_a_full_lane_runs_one_call_at_a_time_and_starts_the_next_when_one_ends() -> None:
    clock = SimClock(START)
    app, provider = make_app(clock, LaneLimits(max_concurrency=1))

    jobs = run(clock, app, lambda: submit_and_run(app, ["a", "b", "c"]))

    assert provider.most_running == 1
    assert provider.started == [0, CALL_MS, 2 * CALL_MS]
    assert [job.attempt for job in jobs] == [1, 1, 1]


def test_a_429_pauses_the_lane_and_its_job_waits_without_an_attempt() -> None:
    clock = SimClock(START)
    app, provider = make_app(clock, LaneLimits(max_concurrency=1))

    async def scenario() -> tuple[list[Job], list[AttemptOutcome | None]]:
        jobs = await submit_and_run(app, ["refuse once", "other"])
        return jobs, [attempt.outcome for attempt in await app.attempts(jobs[0].id)]

    (refused, other), outcomes = run(clock, app, scenario)

    # The other job waited out the pause too: the lane was paused for everyone.
    assert provider.started == [0, 5_000 + CALL_MS, 5_000 + 2 * CALL_MS]
    assert (refused.state, refused.attempt) == (JobState.SUCCEEDED, 1)
    assert outcomes == [AttemptOutcome.DEFERRED, AttemptOutcome.SUCCEEDED]
    assert other.state is JobState.SUCCEEDED


def test_a_call_the_provider_never_accepts_ends_after_a_bounded_number_of_429s() -> None:
    clock = SimClock(START)
    app, provider = make_app(clock, LaneLimits(max_concurrency=1))

    async def scenario() -> tuple[Job, list[AttemptOutcome | None]]:
        (job,) = await submit_and_run(app, ["always refused"])
        return job, [attempt.outcome for attempt in await app.attempts(job.id)]

    job, outcomes = run(clock, app, scenario)

    # Twenty 429s are waited out for free; then they use attempts, and the job fails.
    assert len(provider.started) == MAX_RATE_LIMIT_DEFERRALS + 3
    assert outcomes.count(AttemptOutcome.DEFERRED) == MAX_RATE_LIMIT_DEFERRALS
    assert (job.state, job.attempt) == (JobState.FAILED, 3)
    assert job.error is not None and job.error.kind == "LaneLimited"


def test_a_spent_budget_makes_queued_jobs_wait_for_the_next_utc_day() -> None:
    clock = SimClock(START)
    app, provider = make_app(clock, LaneLimits(max_concurrency=1))

    # Hours pass until midnight: a worker that only wakes when a job is due.
    patient = WorkerConfig(concurrency=8, poll_interval_ms=DAY_MS)

    async def scenario() -> list[Job]:
        await issue_key(app, "acme", daily_budget=BUDGET)
        return await submit_and_run(app, ["spend", "next", "after"], patient)

    spender, waiting, after = run(clock, app, scenario)

    midnight = next_day_start(START) - START
    # The job that spent the budget was running already: it finished.
    assert provider.started == [0, midnight, midnight + CALL_MS]
    assert spender.state is JobState.SUCCEEDED
    assert (waiting.state, waiting.attempt, after.attempt) == (JobState.SUCCEEDED, 1, 1)


def test_a_spent_budget_fails_queued_jobs_when_the_worker_says_so() -> None:
    clock = SimClock(START)
    app, provider = make_app(clock, LaneLimits(max_concurrency=1))
    failing = WorkerConfig(concurrency=8, over_budget=OverBudget.FAIL)

    async def scenario() -> list[Job]:
        await issue_key(app, "acme", daily_budget=BUDGET)
        return await submit_and_run(app, ["spend", "next"], failing)

    spender, failed = run(clock, app, scenario)

    assert provider.started == [0]
    assert spender.state is JobState.SUCCEEDED
    assert (failed.state, failed.attempt) == (JobState.FAILED, 1)
    assert failed.error is not None
    assert failed.error.kind == BUDGET_EXHAUSTED
    assert "daily LLM budget of $1" in failed.error.message


def test_another_tenants_spend_does_not_stop_a_tenant() -> None:
    clock = SimClock(START)
    app, provider = make_app(clock, LaneLimits(max_concurrency=1))

    async def scenario() -> list[Job]:
        await issue_key(app, "acme", daily_budget=BUDGET)
        await issue_key(app, "globex", daily_budget=BUDGET)
        await submit_and_run(app, ["spend"], tenant="acme")
        return await submit_and_run(app, ["mine"], tenant="globex")

    (theirs,) = run(clock, app, scenario)

    assert theirs.state is JobState.SUCCEEDED
    assert provider.started == [0, CALL_MS]
