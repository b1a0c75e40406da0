"""The part of the store protocol that keeps the worker registry (`WorkerRegistry`).

Each worker process has one row, keyed by its worker id (the owner its leases name):
written at start and on every heartbeat by `worker_beat` (one statement a heartbeat
interval, however many jobs the worker holds), marked by `worker_stopped` on a
graceful shutdown, read by the dashboard, the API and the metrics, and deleted by
retention (`prune_workers`) once not heard of for long. Whether a worker is alive is
judged from its last heartbeat by `backroom.core.workers`, not by the store.
"""

from __future__ import annotations

from typing import Protocol

from backroom.core.workers import WorkerInfo, WorkerRecord


class WorkerRegistry(Protocol):
    """The worker processes that have registered, as of their last heartbeat."""

    async def worker_beat(self, worker: WorkerInfo, now: int) -> None:
        """Record that `worker` is alive at `now`: registers it (a fresh row, or its row
        updated, stopped no more) or refreshes its heartbeat."""

    async def worker_stopped(self, worker_id: str, now: int) -> bool:
        """Mark the worker stopped at `now` (a graceful shutdown); False if unknown."""

    async def workers(self) -> list[WorkerRecord]:
        """Every registered worker, by id."""

    async def prune_workers(self, older_than: int) -> int:
        """Delete the workers last heard of (heartbeat or stop) before `older_than`:
        stopped or lost ones, since an alive worker beats every interval; how many."""
