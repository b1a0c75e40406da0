"""The app the webhook process tests run in `backroom worker` processes: one task."""

from __future__ import annotations

from backroom import App, JobContext
from backroom.core.job import JSON

app = App()


@app.task("echo")
async def echo(ctx: JobContext, payload: JSON) -> JSON:
    """Return the payload: the job's `job.succeeded` event is what the tests deliver."""
    return {"echo": payload}
