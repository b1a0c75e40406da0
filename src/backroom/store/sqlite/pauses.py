"""Paused queues and lanes on SQLite (`SqlitePauses`), and the claim's view of them.

The claim reads the pauses inside its own write transaction (`PAUSED_QUEUES`,
`UNPAUSED_LANE`), so no worker takes a job of a queue or lane paused before it.
"""

from __future__ import annotations

import sqlite3

from backroom.store.records import Pause, PauseKind
from backroom.store.rows import pause_from_row
from backroom.store.sqlite.part import SqlitePart

PAUSED_QUEUES = "SELECT name FROM pauses WHERE kind = 'queue'"
"""The names of the paused queues."""

UNPAUSED_LANE = (
    "(job.lane IS NULL OR job.lane NOT IN (SELECT name FROM pauses WHERE kind = 'lane'))"
)
"""A condition on a job (`job`): it is in no lane, or its lane is not paused."""

UNPAUSED_QUEUE = "job.queue NOT IN (SELECT name FROM pauses WHERE kind = 'queue')"
"""A condition on a job (`job`): its queue is not paused."""

_PAUSE = """
INSERT INTO pauses (kind, name, paused_at) VALUES (?, ?, ?)
ON CONFLICT (kind, name) DO NOTHING
"""

_ONE = "SELECT kind, name, paused_at FROM pauses WHERE kind = ? AND name = ?"

_RESUME = "DELETE FROM pauses WHERE kind = ? AND name = ?"

_EVERY = "SELECT kind, name, paused_at FROM pauses ORDER BY kind, name"


def paused_queues(connection: sqlite3.Connection) -> set[str]:
    """The names of the paused queues."""
    return {row[0] for row in connection.execute(PAUSED_QUEUES)}


def _pause(connection: sqlite3.Connection, kind: PauseKind, name: str, now: int) -> Pause:
    connection.execute(_PAUSE, (str(kind), name, now))
    return pause_from_row(connection.execute(_ONE, (str(kind), name)).fetchone())


class SqlitePauses(SqlitePart):
    """Queues and lanes paused for every worker (see `QueueStore`)."""

    async def pause(self, kind: PauseKind, name: str, now: int) -> Pause:
        """Pause the queue or lane `name`; the pause (the first one, if it was paused)."""
        return await self._database.write(lambda connection: _pause(connection, kind, name, now))

    async def resume(self, kind: PauseKind, name: str) -> bool:
        """Resume the queue or lane `name`; its due jobs are new work. False if not paused."""
        resumed = await self._database.write(
            lambda connection: connection.execute(_RESUME, (str(kind), name)).rowcount > 0
        )
        if resumed:
            self._new_work.announce()
        return resumed

    async def pauses(self) -> list[Pause]:
        """Every pause, by kind and name."""
        rows = await self._database.read(lambda connection: connection.execute(_EVERY).fetchall())
        return [pause_from_row(row) for row in rows]
