"""The worker's log lines: one per transition of a job, per lease lost, and around a shutdown."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from backroom import App, JobContext, JobState, Permanent, SimClock, WorkerConfig, run_until_idle
from backroom.store.sqlite.store import SqliteStore

START = 1_700_000_000_000


def _app(clock: SimClock) -> App:
    return App(store=SqliteStore.from_url("sqlite://:memory:"), clock=clock)


def _messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("backroom.worker")]


def test_each_failure_is_one_line_naming_the_job_task_and_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = SimClock(START)
    app = _app(clock)

    @app.task("flaky")
    async def flaky(ctx: JobContext, _: Any) -> None:
        if ctx.attempt == 1:
            raise TimeoutError("slow upstream")
        raise Permanent("bad input")

    async def scenario() -> None:
        async with app:
            await app.submit("flaky", {"secret": "input-never-logged"}, max_attempts=3)
            await run_until_idle(app)

    with caplog.at_level(logging.INFO, logger="backroom"):
        clock.run(scenario())

    records = [record for record in caplog.records if record.name == "backroom.jobs"]
    lines = [record.getMessage() for record in records]
    assert lines[:2] == [
        "job 1 (flaky) submitted to queue interactive",
        "job 1 (flaky) attempt 1/3 started after waiting 0.0 s",
    ]
    assert lines[2].startswith("job 1 (flaky) attempt 1/3 failed, retrying in ")
    assert lines[2].endswith("TimeoutError: slow upstream")
    assert lines[3] == "job 1 (flaky) attempt 2/3 started after waiting 0.0 s"
    assert lines[4] == "job 1 (flaky) failed for good after attempt 2/3: Permanent: bad input"
    assert len(lines) == 5
    assert "input-never-logged" not in caplog.text
    assert_facts(records)


def assert_facts(records: list[logging.LogRecord]) -> None:
    """The facts of the lines of `flaky`'s job: its events, and all of its failure's."""
    failed = vars(records[4])["fields"]
    assert failed == {
        "event": "job.failed",
        "job_id": 1,
        "tenant": "default",
        "task": "flaky",
        "queue": "interactive",
        "attempt": 2,
        "outcome": "failed",
        "error_class": "Permanent",
        "duration_ms": 0,
    }
    assert [vars(record)["fields"]["event"] for record in records] == [
        "job.submitted",
        "job.started",
        "job.retried",
        "job.started",
        "job.failed",
    ]


def test_a_lost_lease_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    clock = SimClock(START)
    app = _app(clock)

    @app.task("slow")
    async def slow(ctx: JobContext, _: Any) -> int:
        if ctx.attempt == 1:
            await clock.sleep(10_000)
        return ctx.attempt

    async def scenario() -> JobState:
        async with app:
            job = (await app.submit("slow", None, max_attempts=5)).job
            config = WorkerConfig(concurrency=1, lease_ms=1_000, heartbeat_ms=3_000, burst=True)
            running = asyncio.create_task(app.worker(config).run())
            await clock.sleep(1_500)
            # The lease runs out and another worker takes the job: at its next heartbeat
            # this worker finds its lease gone (its one slot is busy: it cannot reclaim).
            await app.store.expire_leases(clock.now())
            await app.store.claim([], 1, "thief", 60_000, clock.now())
            await running
            return (await app.get(job.id)).state

    with caplog.at_level(logging.INFO, logger="backroom"):
        assert clock.run(scenario()) is JobState.SUCCEEDED

    lost = [line for line in _messages(caplog) if "lease lost" in line]
    assert lost == [
        "job 1 (slow): lease lost while it ran; its attempt is abandoned, "
        "the job is not this worker's any more"
    ]


def test_a_shutdown_says_what_it_waits_for_and_what_it_hands_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = SimClock(START)
    app = _app(clock)

    @app.task("slow")
    async def slow(ctx: JobContext, _: Any) -> None:
        await clock.sleep(60_000)

    async def scenario() -> None:
        async with app:
            await app.submit("slow", None)
            worker = app.worker(WorkerConfig(shutdown_grace_ms=1_500))
            running = asyncio.create_task(worker.run())
            await clock.sleep(2_000)
            worker.stop()
            await running

    with caplog.at_level(logging.INFO, logger="backroom"):
        clock.run(scenario())

    assert _messages(caplog) == [
        "stopping: claiming no more jobs, waiting up to 1.5 s for 1 running job(s)",
        "grace period over: handing 1 unfinished job(s) back to the queue: 1",
        "stopped: 1 job(s) handed back to the queue",
    ]
