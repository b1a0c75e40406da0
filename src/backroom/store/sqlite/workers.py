"""The worker registry on SQLite (`SqliteWorkers`; see `WorkerRegistry`)."""

from __future__ import annotations

from backroom.core.workers import WorkerInfo, WorkerRecord
from backroom.store.sqlite.part import SqlitePart
from backroom.store.worker_rows import (
    WORKER_BEAT,
    WORKER_COLUMNS,
    worker_from_row,
    worker_values,
)

_BEAT = WORKER_BEAT.format(values=", ".join("?" * 9))

_STOPPED = "UPDATE workers SET stopped_at = ? WHERE id = ?"

_EVERY = f"SELECT {WORKER_COLUMNS} FROM workers ORDER BY id"

_PRUNE = "DELETE FROM workers WHERE COALESCE(stopped_at, heartbeat_at) < ?"


class SqliteWorkers(SqlitePart):
    """The worker processes that have registered (see `WorkerRegistry`)."""

    async def worker_beat(self, worker: WorkerInfo, now: int) -> None:
        """Register `worker`, or refresh its heartbeat, at `now`."""
        values = worker_values(worker, now)
        await self._database.write(lambda connection: connection.execute(_BEAT, values))

    async def worker_stopped(self, worker_id: str, now: int) -> bool:
        """Mark the worker stopped at `now`; False if it is not registered."""
        return await self._database.write(
            lambda connection: connection.execute(_STOPPED, (now, worker_id)).rowcount > 0
        )

    async def workers(self) -> list[WorkerRecord]:
        """Every registered worker, by id."""
        rows = await self._database.read(lambda connection: connection.execute(_EVERY).fetchall())
        return [worker_from_row(row) for row in rows]

    async def prune_workers(self, older_than: int) -> int:
        """Delete the workers last heard of before `older_than`; how many."""
        return await self._database.write(
            lambda connection: connection.execute(_PRUNE, (older_than,)).rowcount
        )
