"""A worker keeps interactive work ahead of batch, and tenants fair within a queue."""

from __future__ import annotations

import asyncio

from backroom import App, JobContext, SimClock, WorkerConfig
from backroom.store.sqlite.store import SqliteStore

START = 1_700_000_000_000
JOB_MS = 100
SLOTS = 2


def make_app(clock: SimClock) -> tuple[App, list[tuple[int, str]]]:
    app = App(store=SqliteStore.from_url("sqlite://:memory:"), clock=clock)
    started: list[tuple[int, str]] = []

    @app.task("work")
    async def work(ctx: JobContext, label: str) -> None:
        started.append((clock.now() - START, label))
        await clock.sleep(JOB_MS)

    return app, started


def run_with_late_arrival(queue: str) -> list[tuple[int, str]]:
    """Tenant `bulk` queues 10,000 batch jobs; at t=1000 tenant `person` submits one."""
    clock = SimClock(START)
    app, started = make_app(clock)

    async def main() -> None:
        async with app:
            bulk = app.new_job("work", "bulk", tenant="bulk", queue="batch")
            await app.submit_many([bulk] * 10_000)
            worker = app.worker(WorkerConfig(concurrency=SLOTS, poll_interval_ms=50))
            running = asyncio.create_task(worker.run())
            await clock.sleep(1_000)
            await app.submit("work", "person", tenant="person", queue=queue)
            await clock.sleep(1_000)
            worker.stop()
            await running

    clock.run(main())
    return started


def test_an_interactive_job_waits_for_at_most_one_job_per_slot() -> None:
    started = run_with_late_arrival("interactive")
    (at,) = [at for at, label in started if label == "person"]
    assert 1_000 <= at <= 1_000 + JOB_MS


def test_a_batch_job_of_another_tenant_is_not_stuck_behind_the_backlog() -> None:
    started = run_with_late_arrival("batch")
    (at,) = [at for at, label in started if label == "person"]
    assert 1_000 <= at <= 1_000 + JOB_MS
