"""The part of the store protocol about queues as a whole (`QueueStore`): pausing
queues and lanes, and counting jobs by queue, tenant and state.

A pause is shared state, like a lane: every worker's claim, on every machine, reads
it in the statement that takes jobs, so a paused queue or lane gives no worker a job
from the moment `pause` returns. Jobs already running go on to their end.
"""

from __future__ import annotations

from typing import Protocol

from backroom.store.records import JobCount, Pause, PauseKind


class QueueStore(Protocol):
    """Queues and lanes paused for every worker until a person resumes them, and the
    queues' counts of jobs."""

    async def pause(self, kind: PauseKind, name: str, now: int) -> Pause:
        """Pause the queue or lane `name`; the pause (the first one, if it was paused)."""

    async def resume(self, kind: PauseKind, name: str) -> bool:
        """Resume the queue or lane `name`; False if it was not paused.

        Its due jobs are claimable again: workers are told, as of new work.
        """

    async def pauses(self) -> list[Pause]:
        """Every pause, by kind and name."""

    async def job_counts(self, now: int, window_ms: int = 3_600_000) -> list[JobCount]:
        """How many jobs each queue and tenant has in each state (none: not listed), by
        queue, tenant and state; with, for the queued ones, the oldest due one's due
        time, and how many finished since `now - window_ms`. One pass over the jobs:
        a queue's `QueueStats` add up from its counts (`queue_stats_of`)."""
