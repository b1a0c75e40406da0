"""The jobs a worker holds: each claimed job with its attempt's task, from the claim
until its end is stored (or its lease is lost), and the shutdown's hand-back of those
still running when the grace period is over."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from backroom.core.job import Job, Lease
from backroom.runtime.attempt import StopReason
from backroom.runtime.attempt_log import log_grace, log_handed_back


@dataclass(slots=True)
class Held:
    """A job a worker holds: the claimed job, its attempt task, why it was stopped."""

    job: Job
    task: asyncio.Task[None] | None = None
    stop_reason: StopReason | None = None


class HeldJobs:
    """The jobs one worker holds, by id; `holding` is set while there is any.

    `on_empty` is called each time the last one is let go: a burst worker may be done.
    """

    def __init__(self, on_empty: Callable[[], None]) -> None:
        self._jobs: dict[int, Held] = {}
        self._on_empty = on_empty
        self.holding = asyncio.Event()

    def __len__(self) -> int:
        return len(self._jobs)

    def add(self, job: Job) -> Held:
        """Hold a job just claimed."""
        held = self._jobs[job.id] = Held(job)
        self.holding.set()
        return held

    def forget(self, job_id: int) -> None:
        """Let a job go: its end is stored, or its lease was lost."""
        if self._jobs.pop(job_id, None) is not None and not self._jobs:
            self.holding.clear()
            self._on_empty()

    def leases(self) -> list[Lease]:
        """The leases of every job held, for the heartbeat to extend."""
        return [held.job.lease for held in self._jobs.values()]

    def stop(self, job_id: int, reason: StopReason) -> None:
        """Cancel a held job's attempt, once, for `reason` (a lost lease, a cancel)."""
        held = self._jobs.get(job_id)
        if held is None or held.stop_reason is not None or held.task is None:
            return
        if not held.task.done():
            held.stop_reason = reason
            held.task.cancel()

    async def hand_back(self, grace_ms: int) -> None:
        """Give running attempts `grace_ms` to end, then stop the rest (their jobs go
        back to the queue) and wait for every attempt task."""
        pending = [task for task in self._tasks() if not task.done()]
        if pending:
            log_grace(len(pending), grace_ms)
            await asyncio.wait(pending, timeout=grace_ms / 1000)
        unfinished = [
            job_id for job_id, held in self._jobs.items() if not (held.task and held.task.done())
        ]
        for job_id in unfinished:
            self.stop(job_id, StopReason.SHUTDOWN)
        log_handed_back(unfinished)
        await asyncio.gather(*self._tasks(), return_exceptions=True)

    def _tasks(self) -> list[asyncio.Task[None]]:
        return [held.task for held in self._jobs.values() if held.task is not None]
