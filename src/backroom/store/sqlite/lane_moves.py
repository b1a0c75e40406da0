"""Moving a running job to another lane (a fallback), on SQLite (`SqliteLaneMoves`)."""

from __future__ import annotations

import sqlite3

from backroom.core.job import Lease
from backroom.store.sqlite.part import SqlitePart

_MOVE_JOB = """
UPDATE jobs SET lane = ?, lane_grant = NULL, updated_at = ?
WHERE id = ? AND lease_token = ? AND state = 'running'
"""

_MOVE_ATTEMPT = "UPDATE attempts SET lane = ? WHERE job_id = ? AND lease_token = ?"


def _move_lane(
    connection: sqlite3.Connection, lease: Lease, lane: str, now: int, attempt: bool
) -> bool:
    """Point the job `lease` holds (and with `attempt` its running attempt) at `lane`;
    False if it is not held."""
    moved = connection.execute(_MOVE_JOB, (lane, now, lease.job_id, lease.token)).rowcount
    if moved and attempt:
        connection.execute(_MOVE_ATTEMPT, (lane, lease.job_id, lease.token))
    return bool(moved)


class SqliteLaneMoves(SqlitePart):
    """A job's current lane, changed by the worker that holds it (see `LaneStore`)."""

    async def move_lane(self, lease: Lease, lane: str, now: int, *, attempt: bool) -> bool:
        """Move the job `lease` holds (with `attempt`, its attempt too) to `lane`;
        False if not held."""
        moved = await self._database.write(
            lambda connection: _move_lane(connection, lease, lane, now, attempt)
        )
        if moved:
            self._new_work.announce()  # a grant it held is freed
        return moved
