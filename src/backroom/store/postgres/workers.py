"""The worker registry on PostgreSQL (`PostgresWorkers`; see `WorkerRegistry`)."""

from __future__ import annotations

from backroom.core.workers import WorkerInfo, WorkerRecord
from backroom.store.postgres.part import PostgresPart
from backroom.store.worker_rows import (
    WORKER_BEAT,
    WORKER_COLUMNS,
    worker_from_row,
    worker_values,
)

_BEAT = WORKER_BEAT.format(values=", ".join(f"${n}" for n in range(1, 10)))

_STOPPED = "UPDATE workers SET stopped_at = $1 WHERE id = $2"

# Byte order, as SQLite sorts.
_EVERY = f'SELECT {WORKER_COLUMNS} FROM workers ORDER BY id COLLATE "C"'

_PRUNE = "DELETE FROM workers WHERE COALESCE(stopped_at, heartbeat_at) < $1"


def _count(status: str) -> int:
    """The row count of a command status such as `UPDATE 1`."""
    return int(status.rsplit(" ", 1)[-1])


class PostgresWorkers(PostgresPart):
    """The worker processes that have registered (see `WorkerRegistry`)."""

    async def worker_beat(self, worker: WorkerInfo, now: int) -> None:
        """Register `worker`, or refresh its heartbeat, at `now`."""
        async with self._database.connection() as connection:
            await connection.execute(_BEAT, *worker_values(worker, now))

    async def worker_stopped(self, worker_id: str, now: int) -> bool:
        """Mark the worker stopped at `now`; False if it is not registered."""
        async with self._database.connection() as connection:
            return _count(await connection.execute(_STOPPED, now, worker_id)) > 0

    async def workers(self) -> list[WorkerRecord]:
        """Every registered worker, by id."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_EVERY)
        return [worker_from_row(row) for row in rows]

    async def prune_workers(self, older_than: int) -> int:
        """Delete the workers last heard of before `older_than`; how many."""
        async with self._database.connection() as connection:
            return _count(await connection.execute(_PRUNE, older_than))
