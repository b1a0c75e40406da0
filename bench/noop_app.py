"""The app the benchmarks run: a task that does nothing, and one that says when it started."""

from __future__ import annotations

import time
from typing import Any

from backroom import App, JobContext

app = App()


@app.task("noop")
async def noop(ctx: JobContext, payload: Any) -> None:
    """Do nothing: the benchmark measures the queue, not the work."""


@app.task("pickup")
async def pickup(ctx: JobContext, payload: Any) -> int:
    """Return when this handler started, in `time.perf_counter_ns()`.

    On Linux that clock is CLOCK_MONOTONIC, one for every process on the machine, so
    the submitting process can subtract its own reading from it.
    """
    return time.perf_counter_ns()
