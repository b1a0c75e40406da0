"""The retention sweep under simulated time: each final state goes after its own period."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from backroom import App, JobContext, Permanent, SimClock, WorkerConfig, run_until_idle
from backroom.core.errors import StoreUnavailable
from backroom.core.job import Job, JobState
from backroom.runtime.retention import DAY_MS, RetentionPolicy, RetentionSweep, prune_finished
from backroom.store.sqlite.store import SqliteStore

START = 1_700_000_000_000
HOUR_MS = 3_600_000
HOURLY = RetentionPolicy(sweep_every_ms=HOUR_MS)


class RecordingStore(SqliteStore):
    """An in-memory store that records each prune's count and can fail the first ones."""

    def __init__(self, failures: int = 0) -> None:
        super().__init__(":memory:")
        self.failures = failures
        self.pruned: list[int] = []

    async def prune(self, older_than: int, states: Sequence[JobState], limit: int) -> int:
        if self.failures:
            self.failures -= 1
            raise StoreUnavailable("the database is restarting")
        deleted = await super().prune(older_than, states, limit)
        self.pruned.append(deleted)
        return deleted


def make_app(clock: SimClock, store: SqliteStore | None = None) -> App:
    app = App(store=store or RecordingStore(), clock=clock)

    @app.task("ok")
    async def ok(ctx: JobContext, _: Any) -> int:
        return 1

    @app.task("boom")
    async def boom(ctx: JobContext, _: Any) -> None:
        raise Permanent("bad input")

    return app


def quiet_worker(stop_at: int, retention: RetentionPolicy | None) -> WorkerConfig:
    """A worker that wakes hourly (so that days pass in few steps) until `stop_at`."""
    return WorkerConfig(
        lease_ms=3 * HOUR_MS,
        poll_interval_ms=HOUR_MS,
        sweep_interval_ms=HOUR_MS,
        stop_at=stop_at,
        retention=retention,
    )


async def finished_jobs(app: App) -> dict[str, Job]:
    """One succeeded, one failed and one cancelled job, all finished at about START."""
    succeeded = (await app.submit("ok", None)).job
    failed = (await app.submit("boom", None)).job
    cancelled = await app.cancel((await app.submit("ok", None)).job.id)
    await run_until_idle(app, WorkerConfig(retention=None))
    return {"succeeded": succeeded, "failed": failed, "cancelled": cancelled}


async def surviving(app: App, jobs: dict[str, Job]) -> set[str]:
    return {name for name, job in jobs.items() if await app.store.get(job.id) is not None}


def test_each_final_state_is_deleted_after_its_own_period() -> None:
    clock = SimClock(START)
    app = make_app(clock)

    async def scenario() -> list[set[str]]:
        async with app:
            jobs = await finished_jobs(app)
            later = await app.submit("ok", None, delay_s=2 * DAY_MS / 1000)
            seen = []
            for day in (6, 8, 31):
                await app.worker(quiet_worker(START + day * DAY_MS, HOURLY)).run()
                seen.append(await surviving(app, {**jobs, "later": later.job}))
            return seen

    after_6_days, after_8_days, after_31_days = clock.run(scenario())

    assert after_6_days == {"succeeded", "failed", "cancelled", "later"}
    assert after_8_days == {"failed", "later"}
    assert after_31_days == set()


def test_a_worker_without_retention_keeps_every_job() -> None:
    clock = SimClock(START)
    app = make_app(clock)

    async def scenario() -> set[str]:
        async with app:
            jobs = await finished_jobs(app)
            await app.worker(quiet_worker(START + 40 * DAY_MS, None)).run()
            return await surviving(app, jobs)

    assert clock.run(scenario()) == {"succeeded", "failed", "cancelled"}


def test_a_failed_sweep_is_logged_and_the_next_one_deletes() -> None:
    clock = SimClock(START)
    store = RecordingStore(failures=1)
    app = make_app(clock, store)
    sweep = RetentionSweep(store, clock, RetentionPolicy(failed_ms=None))

    async def scenario() -> list[int]:
        async with app:
            await finished_jobs(app)
            await clock.sleep(8 * DAY_MS)
            return [await sweep.sweep(), await sweep.sweep()]

    assert clock.run(scenario()) == [0, 2]


def test_a_backlog_is_deleted_in_batches() -> None:
    clock = SimClock(START)
    store = RecordingStore()
    app = make_app(clock, store)

    async def scenario() -> int:
        async with app:
            await app.submit_many([app.new_job("ok", n) for n in range(5)])
            await run_until_idle(app, WorkerConfig(retention=None))
            return await prune_finished(store, clock.now() + 1, [JobState.SUCCEEDED], batch=2)

    assert clock.run(scenario()) == 5
    assert store.pruned == [2, 2, 1]


def test_states_kept_equally_long_are_pruned_together_and_none_means_forever() -> None:
    now = START + 100 * DAY_MS
    default = RetentionPolicy()
    one_day = RetentionPolicy(succeeded_ms=DAY_MS, cancelled_ms=DAY_MS, failed_ms=None)

    assert default.cutoffs(now) == [
        (now - 7 * DAY_MS, (JobState.SUCCEEDED, JobState.CANCELLED)),
        (now - 30 * DAY_MS, (JobState.FAILED,)),
    ]
    assert one_day.cutoffs(now) == [(now - DAY_MS, (JobState.SUCCEEDED, JobState.CANCELLED))]
    assert RetentionPolicy(None, None, None).cutoffs(now) == []


@pytest.mark.parametrize("options", [{"succeeded_ms": -1}, {"sweep_every_ms": 0}, {"batch": 0}])
def test_a_policy_rejects_negative_periods_and_empty_batches(options: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        RetentionPolicy(**options)


def test_the_sweep_forgets_workers_stopped_or_lost_for_a_day() -> None:
    clock = SimClock(START)
    app = make_app(clock)
    sweep = RetentionSweep(app.store, clock, HOURLY)

    async def scenario() -> list[list[str]]:
        async with app:
            await run_until_idle(app, WorkerConfig(retention=None, worker_id="stopped"))
            seen = [[record.info.worker_id for record in await app.store.workers()]]
            await clock.sleep(DAY_MS - 1)
            await sweep.sweep()
            seen.append([record.info.worker_id for record in await app.store.workers()])
            await clock.sleep(2)
            await sweep.sweep()
            seen.append([record.info.worker_id for record in await app.store.workers()])
            return seen

    assert clock.run(scenario()) == [["stopped"], ["stopped"], []]
