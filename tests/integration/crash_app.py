"""A tiny app for the crash test: each job records one side effect, then holds on."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from backroom import App, JobContext

app = App()


@app.task("effect-then-hold")
async def effect_then_hold(ctx: JobContext, payload: dict[str, Any]) -> int:
    """Append this job's id and the worker's pid to a file, once; then take a while."""

    def record() -> int:
        with Path(payload["log"]).open("a") as log:
            log.write(f"{ctx.job.id} {os.getpid()}\n")
        return os.getpid()

    first_pid = await ctx.once("record", record)
    await ctx.clock.sleep(payload["hold_ms"])
    return int(first_pid)
