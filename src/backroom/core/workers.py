"""The worker registry's values: who a worker process is, and whether it is alive.

A worker writes its `WorkerInfo` when it starts and again on every heartbeat (once
per interval, whatever it runs), and marks itself stopped when it shuts down. Nothing
else says a worker died: one whose last heartbeat is `LOST_AFTER_BEATS` of its own
intervals old is judged lost (`WorkerRecord.state`), and retention deletes stopped and
lost rows once they are old.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

LOST_AFTER_BEATS = 3
"""Heartbeat intervals without a beat after which a worker counts as lost."""


class WorkerState(enum.StrEnum):
    """Where a registered worker is: running and beating, silent, or shut down."""

    ALIVE = "alive"
    LOST = "lost"
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """One worker process: its id (the owner its leases name), where it runs, what it
    claims (`queues`, empty: every queue), how many jobs at once, how often it beats."""

    worker_id: str
    hostname: str
    pid: int
    queues: tuple[str, ...]
    concurrency: int
    heartbeat_ms: int
    started_at: int


@dataclass(frozen=True, slots=True)
class WorkerRecord:
    """A registered worker as the store keeps it: its info, its last heartbeat, and
    when it stopped (None: it has not said so)."""

    info: WorkerInfo
    heartbeat_at: int
    stopped_at: int | None = None

    def lost_at(self) -> int:
        """When a worker that beats no more counts as lost.

        >>> info = WorkerInfo("w", "host", 1, (), 10, 1_000, 0)
        >>> WorkerRecord(info, heartbeat_at=5_000).lost_at()
        8000
        """
        return self.heartbeat_at + LOST_AFTER_BEATS * self.info.heartbeat_ms

    def state(self, now: int) -> WorkerState:
        """Stopped if it said so, lost once its heartbeat is too old, alive otherwise.

        >>> info = WorkerInfo("w", "host", 1, (), 10, 1_000, 0)
        >>> [WorkerRecord(info, 5_000).state(now) for now in (7_999, 8_000)]
        [<WorkerState.ALIVE: 'alive'>, <WorkerState.LOST: 'lost'>]
        >>> WorkerRecord(info, 5_000, stopped_at=6_000).state(6_000)
        <WorkerState.STOPPED: 'stopped'>
        """
        if self.stopped_at is not None:
            return WorkerState.STOPPED
        return WorkerState.LOST if now >= self.lost_at() else WorkerState.ALIVE
