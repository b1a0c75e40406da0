"""Under a SimClock the worker sleeps straight to its next due job: no idle polling.

Each test counts the store calls the worker's loops make (claims, wake-up queries,
lease sweeps, heartbeats) rather than timing anything: polling every virtual second,
a job due in twelve hours cost 43,200 claims.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any

from backroom import (
    App,
    Jitter,
    JobContext,
    JobState,
    Retryable,
    RetryPolicy,
    Schedule,
    SimClock,
    WorkerConfig,
    run_until_idle,
)
from backroom.core.job import Job
from backroom.core.outcome import Succeeded
from backroom.store.protocol import HeartbeatResult
from backroom.store.sqlite.store import SqliteStore

START = 1_700_000_000_000
HOUR_MS = 3_600_000
LOOP_CALLS = ("claim", "next_wakeup", "expire_leases", "heartbeat")
EXTRA_CYCLE = 3
"""The calls of one more pass of the claim loop (a claim that finds nothing, the idle
check, the next wake-up) that a job's end may or may not cost: whether the wake of its
freed slot and the wake of its stored end are taken in one pass or two depends on
when the SQLite store's thread answers, in real time (seen in about a third of runs
since at least 5dbb113; the cause is not pinned down)."""


class CountingStore(SqliteStore):
    """A SQLite store that counts the calls the worker's loops make."""

    calls: Counter[str]

    async def claim(
        self,
        queues: Sequence[str],
        limit: int,
        worker_id: str,
        lease_ms: int,
        now: int,
        tasks: Collection[str] | None = None,
    ) -> list[Job]:
        self.calls["claim"] += 1
        return await super().claim(queues, limit, worker_id, lease_ms, now, tasks)

    async def next_wakeup(
        self, queues: Sequence[str], tasks: Collection[str] | None = None
    ) -> int | None:
        self.calls["next_wakeup"] += 1
        return await super().next_wakeup(queues, tasks)

    async def expire_leases(self, now: int, limit: int = 1000) -> list[Job]:
        self.calls["expire_leases"] += 1
        return await super().expire_leases(now, limit)

    async def heartbeat(self, leases: Any, lease_ms: int, now: int) -> HeartbeatResult:
        self.calls["heartbeat"] += 1
        return await super().heartbeat(leases, lease_ms, now)


def counting_app(clock: SimClock, retry: RetryPolicy | None = None) -> tuple[App, CountingStore]:
    store = CountingStore.from_url("sqlite://:memory:")
    assert isinstance(store, CountingStore)
    store.calls = Counter()
    return App(store=store, clock=clock, retry=retry, rng=random.Random(1)), store


def loop_calls(store: CountingStore) -> int:
    return sum(store.calls[name] for name in LOOP_CALLS)


def test_a_day_of_retries_after_a_twelve_hour_delay_takes_a_few_store_calls() -> None:
    clock = SimClock(START)
    every_six_hours = RetryPolicy(
        max_attempts=3,
        schedule=Schedule.CONSTANT,
        base_ms=6 * HOUR_MS,
        cap_ms=6 * HOUR_MS,
        jitter=Jitter.NONE,
    )
    app, store = counting_app(clock, every_six_hours)
    started: list[int] = []

    @app.task("flaky")
    async def flaky(ctx: JobContext, _: Any) -> str:
        started.append(clock.now() - START)
        if ctx.attempt < 3:
            raise Retryable("not yet")
        return "done"

    async def scenario() -> Job | None:
        async with app:
            job = (await app.submit("flaky", None, delay_s=12 * 3600)).job
            await run_until_idle(app)
            return await app.get(job.id)

    job = clock.run(scenario())
    assert job is not None and job.state is JobState.SUCCEEDED
    assert started == [12 * HOUR_MS, 18 * HOUR_MS, 24 * HOUR_MS]
    # A few calls per attempt; polling each virtual second it was over 86,000. An
    # attempt's end may cost one claim more (see `EXTRA_CYCLE`).
    assert store.calls["claim"] <= 3 * (3 + 1)
    assert loop_calls(store) <= 40, store.calls


def test_a_job_submitted_while_the_worker_sleeps_to_a_far_one_runs_at_once() -> None:
    clock = SimClock(START)
    app, store = counting_app(clock)
    started: dict[str, int] = {}

    @app.task("note")
    async def note(ctx: JobContext, name: str) -> None:
        started[name] = clock.now() - START

    async def submit_later() -> None:
        await clock.sleep(HOUR_MS)
        await app.submit("note", "soon")

    async def scenario() -> None:
        async with app:
            await app.submit("note", "far", delay_s=12 * 3600)
            submitter = asyncio.create_task(submit_later())
            await run_until_idle(app)
            await submitter

    clock.run(scenario())
    # The submission's new-work hint wakes the worker; nothing waits for a poll. 19
    # calls, or 22 with one more cycle after a job's end (see `EXTRA_CYCLE`).
    assert started == {"soon": HOUR_MS, "far": 12 * HOUR_MS}
    assert loop_calls(store) <= 19 + 2 * EXTRA_CYCLE, store.calls


def test_an_idle_worker_sleeps_until_its_stop_time() -> None:
    clock = SimClock(START)
    app, store = counting_app(clock)

    async def scenario() -> int:
        async with app:
            await app.worker(WorkerConfig(stop_at=START + 24 * HOUR_MS)).run()
            return clock.now()

    assert clock.run(scenario()) == START + 24 * HOUR_MS
    assert loop_calls(store) <= 10, store.calls


def test_a_burst_worker_leaves_as_soon_as_another_workers_last_job_ends() -> None:
    clock = SimClock(START)
    app, _ = counting_app(clock)
    ran: list[int] = []

    @app.task("note")
    async def note(ctx: JobContext, _: Any) -> None:
        ran.append(ctx.job.id)

    async def other_worker_finishes(job: Job) -> None:
        await clock.sleep(5_000)
        await app.store.finish([(job.lease, Succeeded("done"))], clock.now())

    async def scenario() -> tuple[int, Job | None]:
        async with app:
            submitted = (await app.submit("note", None)).job
            # Another worker holds the job for a minute; this one has nothing to claim.
            [held] = await app.store.claim((), 1, "other", 60_000, clock.now())
            finishing = asyncio.create_task(other_worker_finishes(held))
            await app.worker(WorkerConfig(burst=True)).run()
            await finishing
            return clock.now(), await app.get(submitted.id)

    left_at, job = clock.run(scenario())
    # The end's feed hint woke it: it did not sleep on to the other's lease expiry.
    assert left_at == START + 5_000
    assert job is not None and job.state is JobState.SUCCEEDED
    assert ran == []
