"""The worker under simulated time: retry schedules, jitter, Retry-After, timeouts."""

from __future__ import annotations

from typing import Any

import pytest
from worker_sim_support import START, make_app, run

from backroom import (
    Jitter,
    JobContext,
    JobState,
    Permanent,
    Retryable,
    RetryPolicy,
    SimClock,
    WorkerConfig,
    run_until_idle,
)
from backroom.core.job import AttemptOutcome


def test_retries_follow_the_schedule_to_the_millisecond() -> None:
    clock = SimClock(START)
    app = make_app(clock)
    calls: list[int] = []

    @app.task("flaky")
    async def flaky(ctx: JobContext, _: Any) -> str:
        calls.append(clock.now() - START)
        if ctx.attempt < 3:
            raise TimeoutError
        return "ok"

    async def scenario() -> Any:
        job = (await app.submit("flaky", None)).job
        await run_until_idle(app, WorkerConfig(poll_interval_ms=100))
        return await app.get(job.id), await app.attempts(job.id)

    job, attempts = run(clock, app, scenario)
    assert job.state is JobState.SUCCEEDED and job.result == "ok"
    assert calls == [0, 1000, 3000]
    assert [a.outcome for a in attempts] == [
        AttemptOutcome.RETRY,
        AttemptOutcome.RETRY,
        AttemptOutcome.SUCCEEDED,
    ]
    assert [a.next_attempt_at for a in attempts[:2]] == [START + 1000, START + 3000]


def test_full_jitter_waits_between_zero_and_the_raw_delay() -> None:
    clock = SimClock(START)
    policy = RetryPolicy(max_attempts=2, base_ms=10_000, jitter=Jitter.FULL)
    app = make_app(clock, policy, seed=3)

    @app.task("once-flaky")
    async def once_flaky(ctx: JobContext, _: Any) -> None:
        if ctx.attempt == 1:
            raise ConnectionError("reset")

    async def scenario() -> list[int]:
        for n in range(20):
            await app.submit("once-flaky", n)
        await run_until_idle(app, WorkerConfig(concurrency=20, poll_interval_ms=50))
        waits = []
        for job in await app.list_jobs():
            first, second = await app.attempts(job.id)
            waits.append(second.started_at - first.finished_at)  # type: ignore[operator]
        return waits

    waits = run(clock, app, scenario)
    assert all(0 <= wait <= 10_000 + 50 for wait in waits)
    assert len(set(waits)) > 5  # spread out, not a synchronised herd


def test_retry_after_is_never_undercut() -> None:
    clock = SimClock(START)
    app = make_app(clock)
    starts: list[int] = []

    @app.task("limited")
    async def limited(ctx: JobContext, _: Any) -> None:
        starts.append(clock.now() - START)
        if ctx.attempt == 1:
            raise Retryable("429 from the provider", after_ms=90_000)

    async def scenario() -> None:
        await app.submit("limited", None)
        await run_until_idle(app, WorkerConfig(poll_interval_ms=100))

    run(clock, app, scenario)
    assert starts[0] == 0 and starts[1] >= 90_000


@pytest.mark.parametrize(
    ("error", "state", "attempts"),
    [
        (Permanent("bad request"), JobState.FAILED, 1),
        (ValueError("invalid input"), JobState.FAILED, 1),
        (ConnectionError("refused"), JobState.FAILED, 3),
        (RuntimeError("unknown"), JobState.FAILED, 3),
    ],
)
def test_only_retryable_errors_are_retried(
    error: Exception, state: JobState, attempts: int
) -> None:
    clock = SimClock(START)
    app = make_app(clock)

    @app.task("fails")
    async def fails(ctx: JobContext, _: Any) -> None:
        raise error

    async def scenario() -> Any:
        job = (await app.submit("fails", None)).job
        await run_until_idle(app)
        return await app.get(job.id)

    job = run(clock, app, scenario)
    assert (job.state, job.attempt) == (state, attempts)
    assert job.error is not None and job.error.kind == type(error).__name__


def test_a_task_timeout_is_a_retryable_failure() -> None:
    clock = SimClock(START)
    app = make_app(clock)

    @app.task("slow", timeout_s=5)
    async def slow(ctx: JobContext, _: Any) -> str:
        if ctx.attempt == 1:
            await clock.sleep(60_000)
        return "fast enough"

    async def scenario() -> Any:
        job = (await app.submit("slow", None)).job
        await run_until_idle(app)
        return await app.get(job.id), await app.attempts(job.id)

    job, attempts = run(clock, app, scenario)
    assert job.state is JobState.SUCCEEDED and job.attempt == 2
    assert attempts[0].error is not None and attempts[0].error.kind == "TimeoutError"
    assert attempts[0].finished_at == START + 5000
