"""backroom's side of the comparison: one no-op task that marks its start.

backroom worker --app bench.peers.backroom_app:app --db URL
"""

from __future__ import annotations

from typing import Any

from backroom import App, JobContext
from bench.peers.marks import mark

app = App()


@app.task("noop")
async def noop(ctx: JobContext, payload: Any) -> None:
    """Mark the start, do nothing else."""
    mark()
