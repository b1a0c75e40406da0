"""Paused queues and lanes on PostgreSQL (`PostgresPauses`), and the claim's view of them.

The claim statement reads `pauses` itself (`PAUSED_QUEUES`, `PAUSED_LANES`), so a
claim that starts after `pause` returned, on any machine, takes none of their jobs.
A resume notifies the new-work channel: workers everywhere claim at once.
"""

from __future__ import annotations

from backroom.store.postgres.part import PostgresPart
from backroom.store.records import Pause, PauseKind
from backroom.store.rows import pause_from_row

PAUSED_QUEUES = "SELECT name FROM pauses WHERE kind = 'queue'"
"""A subquery: the names of the paused queues."""

PAUSED_LANES = "SELECT name FROM pauses WHERE kind = 'lane'"
"""A subquery: the names of the paused lanes."""

_PAUSE = """
WITH inserted AS (
    INSERT INTO pauses (kind, name, paused_at) VALUES ($1, $2, $3)
    ON CONFLICT (kind, name) DO NOTHING
    RETURNING kind, name, paused_at
)
SELECT * FROM inserted
UNION ALL
SELECT kind, name, paused_at FROM pauses WHERE kind = $1 AND name = $2
"""
"""$1 kind, $2 name, $3 now: the new pause, or the one that was there (a statement's
snapshot does not see its own insert, so one row comes back; none only when another
transaction made the same pause while this statement ran: `_ONE` then reads it)."""

_ONE = "SELECT kind, name, paused_at FROM pauses WHERE kind = $1 AND name = $2"

_RESUME = """
WITH resumed AS (DELETE FROM pauses WHERE kind = $1 AND name = $2 RETURNING name)
SELECT pg_notify($3, ''), name FROM resumed
"""

_EVERY = 'SELECT kind, name, paused_at FROM pauses ORDER BY kind, name COLLATE "C"'


class PostgresPauses(PostgresPart):
    """Queues and lanes paused for every worker (see `QueueStore`)."""

    async def pause(self, kind: PauseKind, name: str, now: int) -> Pause:
        """Pause the queue or lane `name`; the pause (the first one, if it was paused)."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(_PAUSE, str(kind), name, now)
            if row is None:
                row = await connection.fetchrow(_ONE, str(kind), name)
        assert row is not None
        return pause_from_row(row)

    async def resume(self, kind: PauseKind, name: str) -> bool:
        """Resume the queue or lane `name`, telling every worker; False if not paused."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(_RESUME, str(kind), name, self._channel)
        return row is not None

    async def pauses(self) -> list[Pause]:
        """Every pause, by kind and name."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_EVERY)
        return [pause_from_row(row) for row in rows]
