"""A store outage during a handler's own writes, under a SimClock.

`ctx.progress` and the write recording a `ctx.once` effect's end are idempotent and
fenced by the lease: while the store is unreachable they are retried with backoff, so
an outage costs the attempt time, not the attempt (nor, on its last one, the job).
Past the retry budget the error reaches the handler.
"""

from __future__ import annotations

import random
from typing import Any

from backroom import App, JobContext, JobState, RetryPolicy, SimClock, run_until_idle
from backroom.context import WRITE_RETRY_BUDGET_MS
from backroom.core.errors import StoreUnavailable
from backroom.core.job import JSON, Job, Lease
from backroom.store.sqlite.store import SqliteStore

START = 1_700_000_000_000


class FlakyStore(SqliteStore):
    """A SQLite store whose handler writes fail as unreachable `outage` times each."""

    outage = 0
    failed: dict[str, int]

    def _down(self, write: str) -> None:
        if self.failed.get(write, 0) < self.outage:
            self.failed[write] = self.failed.get(write, 0) + 1
            raise StoreUnavailable("the database is restarting")

    async def set_progress(
        self, lease: Lease, fraction: float | None, partial: JSON, now: int
    ) -> bool:
        self._down("progress")
        return await super().set_progress(lease, fraction, partial, now)

    async def once_end(self, lease: Lease, name: str, result: JSON, now: int) -> None:
        self._down("once_end")
        await super().once_end(lease, name, result, now)


def run_once_job(outage: int) -> tuple[Job | None, list[int], dict[str, int]]:
    """A job that charges once, then reports progress, on its only attempt."""
    clock = SimClock(START)
    store = FlakyStore(":memory:")
    store.outage, store.failed = outage, {}
    app = App(store=store, clock=clock, retry=RetryPolicy(max_attempts=1), rng=random.Random(1))
    charges: list[int] = []

    @app.task("charge", timeout_s=3600)
    async def charge(ctx: JobContext, _: Any) -> str:
        async def effect() -> str:
            charges.append(1)
            return "ch_1"

        charge_id = await ctx.once("charge-card", effect)
        await ctx.progress(1.0)
        return str(charge_id)

    async def scenario() -> Job | None:
        async with app:
            job = (await app.submit("charge", None)).job
            await run_until_idle(app)
            return await app.get(job.id)

    return clock.run(scenario()), charges, store.failed


def test_an_outage_during_the_handlers_writes_costs_time_not_the_attempt() -> None:
    job, charges, failed = run_once_job(outage=4)

    assert failed == {"once_end": 4, "progress": 4}
    assert job is not None
    assert (job.state, job.attempt, job.result) == (JobState.SUCCEEDED, 1, "ch_1")
    assert charges == [1]
    # Four retries each: 0.1 + 0.2 + 0.4 + 0.8 s, twice.
    assert job.finished_at == START + 2 * 1_500


def test_an_outage_longer_than_the_retry_budget_reaches_the_handler() -> None:
    job, charges, _ = run_once_job(outage=1_000)

    assert job is not None and job.error is not None
    assert (job.state, job.error.kind) == (JobState.FAILED, "StoreUnavailable")
    assert charges == [1]
    assert job.finished_at is not None and job.finished_at - START >= WRITE_RETRY_BUDGET_MS
