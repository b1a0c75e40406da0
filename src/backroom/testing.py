"""Helpers for users' own tests: run an app's jobs to the end under simulated time."""

from __future__ import annotations

from dataclasses import replace

from backroom.app import App
from backroom.runtime.worker_config import WorkerConfig


async def run_until_idle(app: App, config: WorkerConfig | None = None) -> None:
    """Run a burst worker until no job is queued or running, then return (jobs of a
    paused queue or lane stay queued: they wait for a resume).

    Under a `SimClock` (call it inside `clock.run(...)`), delays, backoff and timeouts
    pass instantly, so a test sees a whole retry schedule play out at once.
    """
    await app.worker(replace(config or WorkerConfig(), burst=True)).run()
