"""The app the process tests run in `backroom worker` processes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from backroom import App, JobContext

app = App()


@app.task("effect-then-hold")
async def effect_then_hold(ctx: JobContext, payload: dict[str, Any]) -> int:
    """Append this job's id and the worker's pid to a file, once; then take a while.

    The progress it reports after the effect tells the test that the `once` record
    is stored: a worker killed after that leaves a record its successor reuses.
    """

    def record() -> int:
        with Path(payload["log"]).open("a") as log:
            log.write(f"{ctx.job.id} {os.getpid()}\n")
        return os.getpid()

    first_pid = await ctx.once("record", record)
    await ctx.progress(0.5)
    await ctx.clock.sleep(payload["hold_ms"])
    return int(first_pid)


@app.task("noop")
async def noop(ctx: JobContext, payload: Any) -> None:
    """Do nothing: the test is about the queue."""


@app.task("hold")
async def hold(ctx: JobContext, hold_ms: int) -> None:
    """Take `hold_ms` milliseconds, so that a run lasts long enough to disturb it."""
    await ctx.clock.sleep(hold_ms)
