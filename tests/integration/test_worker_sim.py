"""The worker under simulated time: leases, cancel, once, progress, shutdown, sync handlers."""

from __future__ import annotations

import asyncio
from typing import Any

from worker_sim_support import START, make_app, run

from backroom import (
    JobContext,
    JobState,
    SimClock,
    WorkerConfig,
    run_until_idle,
)
from backroom.core.job import AttemptOutcome, ErrorInfo
from backroom.core.outcome import Failed


def test_a_crashed_workers_job_comes_back_after_its_lease() -> None:
    clock = SimClock(START)
    app = make_app(clock)

    @app.task("work")
    async def work(ctx: JobContext, _: Any) -> int:
        return ctx.attempt

    async def scenario() -> Any:
        job = (await app.submit("work", None)).job
        # A worker that claims and then dies: it never heartbeats nor finishes.
        (dead,) = await app.store.claim(["interactive"], 1, "dead-worker", 10_000, clock.now())
        await run_until_idle(app, WorkerConfig(lease_ms=10_000, sweep_interval_ms=1000))
        return dead, await app.get(job.id), await app.attempts(job.id)

    _, job, attempts = run(clock, app, scenario)
    assert job.state is JobState.SUCCEEDED and job.result == 2
    assert attempts[0].outcome is AttemptOutcome.LEASE_EXPIRED
    assert attempts[1].started_at >= START + 10_000


def test_a_stale_lease_cannot_overwrite_the_new_holder() -> None:
    clock = SimClock(START)
    app = make_app(clock)

    async def scenario() -> Any:
        job = (await app.submit("anything", None)).job
        (first,) = await app.store.claim([], 1, "zombie", 1000, clock.now())
        await clock.sleep(2000)
        await app.store.expire_leases(clock.now())
        (second,) = await app.store.claim([], 1, "alive", 1000, clock.now())
        stale = await app.store.finish([(first.lease, Failed(ErrorInfo("X", "late")))], clock.now())
        return stale, second, await app.get(job.id)

    stale, second, job = run(clock, app, scenario)
    assert stale == [False]
    assert job.state is JobState.RUNNING and job.lease_token == second.lease_token


def test_heartbeats_keep_a_long_job_leased() -> None:
    clock = SimClock(START)
    app = make_app(clock)

    @app.task("long")
    async def long(ctx: JobContext, _: Any) -> str:
        await clock.sleep(120_000)  # twelve leases long
        return "done"

    async def scenario() -> Any:
        job = (await app.submit("long", None)).job
        await run_until_idle(app, WorkerConfig(lease_ms=10_000))
        return await app.get(job.id)

    job = run(clock, app, scenario)
    assert (job.state, job.attempt) == (JobState.SUCCEEDED, 1)


def test_cancel_stops_a_queued_job_and_a_running_one() -> None:
    clock = SimClock(START)
    app = make_app(clock)
    started: list[int] = []

    @app.task("forever")
    async def forever(ctx: JobContext, n: int) -> None:
        started.append(n)
        await clock.sleep(3_600_000)

    async def scenario() -> Any:
        queued = (await app.submit("forever", 1, delay_s=60)).job
        running = (await app.submit("forever", 2)).job
        await app.cancel(queued.id)

        async def cancel_later() -> None:
            await clock.sleep(5_000)
            await app.cancel(running.id)

        canceller = asyncio.create_task(cancel_later())
        await run_until_idle(app, WorkerConfig(lease_ms=3_000))
        await canceller
        return await app.get(queued.id), await app.get(running.id)

    queued, running = run(clock, app, scenario)
    assert started == [2]
    assert queued.state is JobState.CANCELLED
    assert running.state is JobState.CANCELLED and running.finished_at is not None
    assert running.finished_at - START <= 5_000 + 1_000  # within one heartbeat


def test_once_runs_an_effect_once_across_retries() -> None:
    clock = SimClock(START)
    app = make_app(clock)
    sent: list[str] = []

    @app.task("email")
    async def email(ctx: JobContext, to: str) -> str:
        def send() -> str:
            sent.append(to)
            return f"message-{len(sent)}"

        message_id = await ctx.once("send-email", send)
        if ctx.attempt == 1:
            raise TimeoutError  # fails after the effect: the retry must not resend
        return str(message_id)

    async def scenario() -> Any:
        job = (await app.submit("email", "user@example.com")).job
        await run_until_idle(app)
        return await app.get(job.id)

    job = run(clock, app, scenario)
    assert sent == ["user@example.com"]
    assert (job.state, job.attempt, job.result) == (JobState.SUCCEEDED, 2, "message-1")


def test_progress_and_partial_output_are_visible_while_running() -> None:
    clock = SimClock(START)
    app = make_app(clock)
    seen: list[Any] = []

    @app.task("stream")
    async def stream(ctx: JobContext, _: Any) -> str:
        for step in (1, 2, 3):
            await ctx.progress(step / 4, partial="word " * step)
            await clock.sleep(1000)
        return "word word word word"

    async def scenario() -> Any:
        job = (await app.submit("stream", None)).job

        async def poll() -> None:
            await clock.sleep(1500)
            current = await app.get(job.id)
            seen.append((current.state, current.progress, current.partial))

        poller = asyncio.create_task(poll())
        await run_until_idle(app)
        await poller
        return await app.get(job.id)

    job = run(clock, app, scenario)
    assert seen == [(JobState.RUNNING, 0.5, "word word ")]
    assert job.state is JobState.SUCCEEDED


def test_shutdown_gives_unfinished_jobs_back_without_using_an_attempt() -> None:
    clock = SimClock(START)
    app = make_app(clock)

    @app.task("slow")
    async def slow(ctx: JobContext, _: Any) -> None:
        await clock.sleep(60_000)

    async def scenario() -> Any:
        job = (await app.submit("slow", None)).job
        worker = app.worker(WorkerConfig(shutdown_grace_ms=1_000))
        running = asyncio.create_task(worker.run())
        await clock.sleep(2_000)
        worker.stop()
        await running
        return await app.get(job.id), await app.attempts(job.id)

    job, attempts = run(clock, app, scenario)
    assert (job.state, job.attempt) == (JobState.QUEUED, 0)
    assert attempts[0].outcome is AttemptOutcome.INTERRUPTED
    assert attempts[0].finished_at == START + 3_000


def test_sync_handlers_run_in_a_thread() -> None:
    clock = SimClock(START)
    app = make_app(clock)

    @app.task("sync")
    def sync(ctx: JobContext, n: int) -> int:
        return n * 2

    async def scenario() -> Any:
        job = (await app.submit("sync", 21)).job
        await run_until_idle(app)
        return await app.get(job.id)

    assert run(clock, app, scenario).result == 42
