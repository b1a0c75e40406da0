"""Lanes on PostgreSQL: acquiring and settling calls, listing lanes, the claim's view of them.

A lane's row is locked (`FOR UPDATE`) for the few statements of one acquire or
settle, in a transaction: workers on every machine take their turns at it, and each
sees the state the last one left. The arithmetic is the core's (`lane_rows`).
"""

from __future__ import annotations

import asyncpg

from backroom.core.errors import LeaseLost
from backroom.core.job import Lease
from backroom.core.lane_settlement import LaneSettlement
from backroom.core.lanes import Denied, Grant, LaneRequest, full_lane
from backroom.store.lane_rows import (
    LANE_COLUMNS,
    LaneWrite,
    lane_decision,
    lane_settled,
    lane_status,
)
from backroom.store.postgres.database import PooledConnection
from backroom.store.postgres.part import PostgresPart
from backroom.store.records import LaneStatus

LANE_USE = """lane_use (lane, in_flight) AS (
    SELECT lane, count(*) FROM jobs
    WHERE state = 'running' AND lane_grant IS NOT NULL
    GROUP BY lane
)"""
"""A CTE: each lane's calls in flight, the running jobs holding a grant (`jobs_lane_grants`)."""

LANE_ROOM = f"""{LANE_USE},
lane_room (name, room) AS (
    -- How many of a lane's jobs one claim takes: none while it is paused or every slot
    -- is taken; else as many as its buckets hold calls of its last call's estimate,
    -- and always one, whose acquire pauses the lane if it does not fit after all.
    -- LEAST and GREATEST skip NULLs: a limit the lane does not have.
    SELECT lane_state.name,
           CASE
               WHEN lane_state.paused_until > $1 THEN 0
               WHEN lane_state.max_concurrency <= COALESCE(lane_use.in_flight, 0) THEN 0
               ELSE GREATEST(1, COALESCE(LEAST(
                   lane_state.max_concurrency - COALESCE(lane_use.in_flight, 0),
                   LEAST(lane_state.requests_per_minute * 60000::bigint,
                         lane_state.request_credit
                         + GREATEST(0, $1 - lane_state.updated_at)
                           * lane_state.requests_per_minute) / 60000,
                   LEAST(lane_state.tokens_per_minute * 60000::bigint,
                         lane_state.token_credit
                         + GREATEST(0, $1 - lane_state.updated_at)
                           * lane_state.tokens_per_minute)
                   / (60000 * GREATEST(1, lane_state.call_tokens))
               ), $2))
           END
    FROM lane_states AS lane_state
    LEFT JOIN lane_use ON lane_use.lane = lane_state.name
)"""
"""CTEs for the claim: `lane_room` says how many jobs of each known lane it may take
($1 now, $2 the claim's limit); a lane without a row has never run: no limit."""

_IN_FLIGHT = (
    "(SELECT count(*) FROM jobs WHERE state = 'running' AND lane_grant IS NOT NULL "
    "AND lane = lane_state.name) AS in_flight"
)

_LOCK_LANE = f"""
SELECT lane_state.*, {_IN_FLIGHT}
FROM lane_states AS lane_state WHERE name = $1
FOR UPDATE OF lane_state
"""

_PLACEHOLDERS = ", ".join(f"${number}" for number in range(1, len(LANE_COLUMNS) + 1))

_CREATE_LANE = f"""
INSERT INTO lane_states ({", ".join(LANE_COLUMNS)}) VALUES ({_PLACEHOLDERS})
ON CONFLICT (name) DO NOTHING
"""

_SAVE_LANE = f"""
UPDATE lane_states SET
    {", ".join(f"{column} = ${number}" for number, column in enumerate(LANE_COLUMNS, 1))}
WHERE name = $1
"""

_GRANT_COLUMNS = len(LANE_COLUMNS)

# The lane is saved only if the grant was (or none was asked for): a lease that is
# gone takes nothing from the lane.
_SAVE_DECISION = f"""
WITH granted AS (
    UPDATE jobs SET lane_grant = ${_GRANT_COLUMNS + 1}
    WHERE ${_GRANT_COLUMNS + 1}::bigint IS NOT NULL AND id = ${_GRANT_COLUMNS + 2}
      AND lease_token = ${_GRANT_COLUMNS + 3} AND state = 'running'
    RETURNING id
), saved AS (
    {_SAVE_LANE.strip()}
      AND (${_GRANT_COLUMNS + 1}::bigint IS NULL OR EXISTS (SELECT FROM granted))
)
SELECT EXISTS (SELECT FROM granted)
"""

# The grant the lease holds, taken off the job (its slot is free from here on).
_TAKE_GRANT = """
WITH held AS (
    SELECT id, lane_grant FROM jobs
    WHERE id = $1 AND lease_token = $2 AND state = 'running' AND lane_grant IS NOT NULL
    FOR UPDATE
)
UPDATE jobs SET lane_grant = NULL FROM held WHERE jobs.id = held.id
RETURNING held.lane_grant
"""

_NOTIFY = "SELECT pg_notify($1, '')"

_RELEASE = """
WITH released AS (
    UPDATE jobs SET lane_grant = NULL
    WHERE id = $1 AND lease_token = $2 AND state = 'running' AND lane_grant IS NOT NULL
    RETURNING id
), wake AS (
    SELECT pg_notify($3, '') WHERE EXISTS (SELECT FROM released)
)
SELECT EXISTS (SELECT FROM released) AS released, (SELECT count(*) FROM wake) AS woken
"""
"""$1 job id, $2 lease token, $3 channel: whether a grant was released (then notified)."""

_LANES = f"""
SELECT lane_state.*, {_IN_FLIGHT}
FROM lane_states AS lane_state
ORDER BY name COLLATE "C"
"""


async def _locked_lane(
    connection: PooledConnection, request: LaneRequest, now: int
) -> asyncpg.Record:
    """Lock the request's lane row, creating it full first if it is new; the row read."""
    row = await connection.fetchrow(_LOCK_LANE, request.lane)
    if row is None:
        new = LaneWrite(request.lane, request.limits, full_lane(request.limits, now), 0)
        await connection.execute(_CREATE_LANE, *new.columns())
        row = await connection.fetchrow(_LOCK_LANE, request.lane)
    assert row is not None  # created above, or by another worker meanwhile
    return row


async def _settle(
    connection: PooledConnection, lease: Lease, settlement: LaneSettlement, now: int
) -> bool:
    """Settle the call `lease` holds a grant for; True if a grant was released."""
    async with connection.transaction():
        # The lane's row before the job's, as `acquire` locks them: never a deadlock.
        row = await connection.fetchrow(_LOCK_LANE, settlement.lane)
        granted: int | None = await connection.fetchval(_TAKE_GRANT, lease.job_id, lease.token)
        if row is not None:
            write = lane_settled(row, row["in_flight"], settlement, granted, now)
            await connection.execute(_SAVE_LANE, *write.columns())
    return granted is not None


class PostgresLanes(PostgresPart):
    """LLM lanes shared by every worker (see `LaneStore`)."""

    async def lane_settle(self, lease: Lease, settlement: LaneSettlement, now: int) -> None:
        """Settle the call the job `lease` holds a grant for; a freed slot is new work."""
        async with self._database.connection() as connection:
            if await _settle(connection, lease, settlement, now):
                await connection.execute(_NOTIFY, self._channel)

    async def lane_release(self, lease: Lease) -> bool:
        """Free the slot of the grant `lease` holds; a freed slot is new work."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(_RELEASE, lease.job_id, lease.token, self._channel)
        return row is not None and bool(row["released"])

    async def lane_acquire(self, lease: Lease, request: LaneRequest, now: int) -> Grant | Denied:
        """Take a call's share of its lane for the job `lease` holds, or say when to retry."""
        async with self._database.connection() as connection:
            async with connection.transaction():
                row = await _locked_lane(connection, request, now)
                write, decision = lane_decision(row, row["in_flight"], request, now)
                tokens = decision.tokens if isinstance(decision, Grant) else None
                granted = await connection.fetchval(
                    _SAVE_DECISION, *write.columns(), tokens, lease.job_id, lease.token
                )
                if tokens is not None and not granted:
                    raise LeaseLost(
                        f"job {lease.job_id} is no longer held under lease {lease.token}"
                    )
            return decision

    async def lanes(self, now: int) -> list[LaneStatus]:
        """Every lane that has had a call, by name, refilled to `now`."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_LANES)
            return [lane_status(row, row["in_flight"], now) for row in rows]
