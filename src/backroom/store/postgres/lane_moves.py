"""Moving a running job to another lane (a fallback), on PostgreSQL (`PostgresLaneMoves`)."""

from __future__ import annotations

from backroom.core.job import Lease
from backroom.store.postgres.part import PostgresPart

_MOVE = """
WITH moved AS (
    -- `before`: the row as it was (only the lease's holder changes a running job's lane).
    UPDATE jobs SET lane = $1, lane_grant = NULL, updated_at = $2
    FROM jobs AS before
    WHERE jobs.id = $3 AND before.id = $3 AND jobs.lease_token = $4 AND jobs.state = 'running'
    RETURNING jobs.id, jobs.lease_token, jobs.attempt, jobs.worker_id, jobs.started_at,
              before.lane AS attempt_lane
), attempt AS (
    -- A running attempt's row is written at its end from the job's (`postgres.finish`):
    -- one that stays in the lane is stored now, with it; one stored before moves.
    UPDATE attempts SET lane = $1
    FROM moved WHERE attempts.job_id = moved.id AND attempts.lease_token = moved.lease_token
      AND $6::boolean
), kept AS (
    INSERT INTO attempts (job_id, number, lease_token, worker_id, started_at, lane)
    SELECT id, attempt, lease_token, worker_id, started_at, attempt_lane FROM moved
    WHERE NOT $6::boolean
    ON CONFLICT (job_id, lease_token) DO NOTHING
), wake AS (
    SELECT pg_notify($5, '') WHERE EXISTS (SELECT FROM moved)
)
SELECT (SELECT count(*) FROM moved) AS moved, (SELECT count(*) FROM wake) AS woken
"""
"""$1 lane, $2 now, $3 job id, $4 lease token, $5 channel (a grant it held is freed),
$6 whether the running attempt moves too."""


class PostgresLaneMoves(PostgresPart):
    """A job's current lane, changed by the worker that holds it (see `LaneStore`)."""

    async def move_lane(self, lease: Lease, lane: str, now: int, *, attempt: bool) -> bool:
        """Move the job `lease` holds (with `attempt`, its attempt too) to `lane`;
        False if not held."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(
                _MOVE, lane, now, lease.job_id, lease.token, self._channel, attempt
            )
        return row is not None and int(row["moved"]) > 0
