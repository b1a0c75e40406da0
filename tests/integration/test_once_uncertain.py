"""`ctx.once` when an earlier attempt began an effect and never recorded its end.

The effect may or may not have happened: the job fails at once (no retries burnt on
it), its error tells a person what to check and how to redrive, and a redrive after
that check runs the effect again.
"""

from __future__ import annotations

import random
from typing import Any

from backroom import App, JobContext, JobState, RetryPolicy, SimClock, run_until_idle
from backroom.core.job import Job
from backroom.store.protocol import RedriveFilter
from backroom.store.sqlite.store import SqliteStore

START = 1_700_000_000_000


def test_an_uncertain_effect_fails_the_job_at_once_and_says_what_to_check() -> None:
    clock = SimClock(START)
    store = SqliteStore.from_url("sqlite://:memory:")
    app = App(store=store, clock=clock, retry=RetryPolicy(max_attempts=5), rng=random.Random(1))
    charges: list[int] = []

    @app.task("checkout", timeout_s=5)
    async def checkout(ctx: JobContext, _: Any) -> str:
        async def charge() -> str:
            charges.append(ctx.attempt)
            if len(charges) == 1:
                await clock.sleep(60_000)  # the timeout stops it mid-effect
            return "ch_1"

        return str(await ctx.once("charge-card", charge))

    async def scenario() -> tuple[Job | None, Job | None]:
        async with app:
            job = (await app.submit("checkout", None)).job
            await run_until_idle(app)
            dead = await app.get(job.id)
            # A person checked that the card was not charged, and redrives the job.
            await app.redrive(RedriveFilter(job_ids=[job.id]))
            await run_until_idle(app)
            return dead, await app.get(job.id)

    dead, redriven = clock.run(scenario())

    assert dead is not None and dead.error is not None
    assert (dead.state, dead.attempt) == (JobState.FAILED, 2)
    assert dead.error.kind == "OnceUncertain"
    message = dead.error.message
    assert "'charge-card'" in message and f"job {dead.id}" in message
    assert "may or may not have happened" in message
    assert f"backroom redrive {dead.id}" in message
    assert redriven is not None
    assert (redriven.state, redriven.result) == (JobState.SUCCEEDED, "ch_1")
    assert charges == [1, 1]  # the first attempt's, and the redriven job's
