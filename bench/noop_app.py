"""The app the throughput benchmarks run: one task that does nothing."""

from __future__ import annotations

from typing import Any

from backroom import App, JobContext

app = App()


@app.task("noop")
async def noop(ctx: JobContext, payload: Any) -> None:
    """Do nothing: the benchmark measures the queue, not the work."""
