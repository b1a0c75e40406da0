"""The worker registry in memory (`MemoryWorkers`; see `WorkerRegistry`)."""

from __future__ import annotations

import dataclasses

from backroom.core.workers import WorkerInfo, WorkerRecord
from backroom.store.memory.part import MemoryPart


class MemoryWorkers(MemoryPart):
    """The worker processes that have registered (see `WorkerRegistry`)."""

    async def worker_beat(self, worker: WorkerInfo, now: int) -> None:
        """Register `worker`, or refresh its heartbeat, at `now`."""
        self._tables.workers[worker.worker_id] = WorkerRecord(worker, now)

    async def worker_stopped(self, worker_id: str, now: int) -> bool:
        """Mark the worker stopped at `now`; False if it is not registered."""
        record = self._tables.workers.get(worker_id)
        if record is None:
            return False
        self._tables.workers[worker_id] = dataclasses.replace(record, stopped_at=now)
        return True

    async def workers(self) -> list[WorkerRecord]:
        """Every registered worker, by id."""
        return [self._tables.workers[key] for key in sorted(self._tables.workers)]

    async def prune_workers(self, older_than: int) -> int:
        """Delete the workers last heard of before `older_than`; how many."""
        old = [
            key
            for key, record in self._tables.workers.items()
            if (record.stopped_at if record.stopped_at is not None else record.heartbeat_at)
            < older_than
        ]
        for key in old:
            del self._tables.workers[key]
        return len(old)
