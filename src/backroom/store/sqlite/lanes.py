"""Lanes on SQLite: acquiring and settling calls, listing lanes, and the claim's view of them.

Each call runs inside the store's `BEGIN IMMEDIATE` transaction, which holds the
database's write lock: no other worker, in this process or another, can read the
lane between our read and our write. The arithmetic is the core's (`lane_rows`).
"""

from __future__ import annotations

import sqlite3

from backroom.core.errors import LeaseLost
from backroom.core.job import Lease
from backroom.core.lane_settlement import LaneSettlement
from backroom.core.lanes import Denied, Grant, LaneRequest
from backroom.store.lane_rows import (
    LANE_COLUMNS,
    LaneWrite,
    lane_decision,
    lane_settled,
    lane_status,
)
from backroom.store.records import LaneStatus
from backroom.store.sqlite.part import SqlitePart

LANE_USE = """lane_use (lane, in_flight) AS (
    SELECT lane, COUNT(*) FROM jobs
    WHERE state = 'running' AND lane_grant IS NOT NULL
    GROUP BY lane
)"""
"""A CTE: each lane's calls in flight, the running jobs holding a grant (`jobs_lane_grants`)."""

LANE_ROOM = f"""{LANE_USE},
lane_room (name, room) AS (
    -- How many of a lane's jobs one claim takes: none while it is paused or every slot
    -- is taken; else as many as its buckets hold calls of its last call's estimate,
    -- and always one, whose acquire pauses the lane if it does not fit after all.
    SELECT lane_state.name,
           CASE
               WHEN lane_state.paused_until > :now THEN 0
               WHEN lane_state.max_concurrency <= COALESCE(lane_use.in_flight, 0) THEN 0
               ELSE MAX(1, MIN(
                   COALESCE(lane_state.max_concurrency - COALESCE(lane_use.in_flight, 0),
                            :limit),
                   COALESCE(MIN(lane_state.requests_per_minute * 60000,
                                lane_state.request_credit
                                + MAX(0, :now - lane_state.updated_at)
                                  * lane_state.requests_per_minute) / 60000,
                            :limit),
                   COALESCE(MIN(lane_state.tokens_per_minute * 60000,
                                lane_state.token_credit
                                + MAX(0, :now - lane_state.updated_at)
                                  * lane_state.tokens_per_minute)
                            / (60000 * MAX(1, lane_state.call_tokens)),
                            :limit)
               ))
           END
    FROM lane_states AS lane_state
    LEFT JOIN lane_use ON lane_use.lane = lane_state.name
)"""
"""CTEs for the claim: `lane_room` says how many jobs of each known lane it may take
(named parameters :now and :limit); a lane without a row has never run: no limit."""

_LANE = f"SELECT {', '.join(LANE_COLUMNS)} FROM lane_states WHERE name = ?"

_IN_FLIGHT = (
    "SELECT COUNT(*) FROM jobs WHERE state = 'running' AND lane_grant IS NOT NULL AND lane = ?"
)

_SAVE_LANE = f"""
INSERT INTO lane_states ({", ".join(LANE_COLUMNS)}) VALUES ({", ".join("?" * len(LANE_COLUMNS))})
ON CONFLICT (name) DO UPDATE SET
    {", ".join(f"{column} = excluded.{column}" for column in LANE_COLUMNS[1:])}
"""

_GRANT = """
UPDATE jobs SET lane_grant = ?
WHERE id = ? AND lease_token = ? AND state = 'running'
"""

_HELD_GRANT = """
SELECT lane_grant FROM jobs
WHERE id = ? AND lease_token = ? AND state = 'running' AND lane_grant IS NOT NULL
"""

_RELEASE = """
UPDATE jobs SET lane_grant = NULL
WHERE id = ? AND lease_token = ? AND state = 'running' AND lane_grant IS NOT NULL
"""

_LANES = f"""
WITH {LANE_USE}
SELECT lane_states.*, COALESCE(lane_use.in_flight, 0) AS in_flight
FROM lane_states LEFT JOIN lane_use ON lane_use.lane = lane_states.name
ORDER BY name
"""


def _in_flight(connection: sqlite3.Connection, lane: str) -> int:
    (count,) = connection.execute(_IN_FLIGHT, (lane,)).fetchone()
    return int(count)


def _save(connection: sqlite3.Connection, write: LaneWrite) -> None:
    connection.execute(_SAVE_LANE, write.columns())


def _acquire(
    connection: sqlite3.Connection, lease: Lease, request: LaneRequest, now: int
) -> Grant | Denied:
    """Take a call's share of its lane for the job `lease` holds, or say when to retry."""
    row = connection.execute(_LANE, (request.lane,)).fetchone()
    write, decision = lane_decision(row, _in_flight(connection, request.lane), request, now)
    if isinstance(decision, Grant):
        granted = connection.execute(_GRANT, (decision.tokens, lease.job_id, lease.token))
        if granted.rowcount == 0:
            raise LeaseLost(f"job {lease.job_id} is no longer held under lease {lease.token}")
    _save(connection, write)
    return decision


def _settle(
    connection: sqlite3.Connection, lease: Lease, settlement: LaneSettlement, now: int
) -> bool:
    """Settle the call `lease` holds a grant for; True if a grant was released."""
    held = connection.execute(_HELD_GRANT, (lease.job_id, lease.token)).fetchone()
    granted = None if held is None else int(held["lane_grant"])
    if granted is not None:
        # Taken off the job: its slot is free from here on.
        connection.execute(_RELEASE, (lease.job_id, lease.token))
    row = connection.execute(_LANE, (settlement.lane,)).fetchone()
    if row is not None:
        in_flight = _in_flight(connection, settlement.lane)
        _save(connection, lane_settled(row, in_flight, settlement, granted, now))
    return granted is not None


def _release(connection: sqlite3.Connection, lease: Lease) -> bool:
    """Free the slot of the grant `lease` holds; True if it held one."""
    return connection.execute(_RELEASE, (lease.job_id, lease.token)).rowcount > 0


def _lanes(connection: sqlite3.Connection, now: int) -> list[LaneStatus]:
    """Every lane that has had a call, by name, refilled to `now`."""
    rows = connection.execute(_LANES).fetchall()
    return [lane_status(row, row["in_flight"], now) for row in rows]


class SqliteLanes(SqlitePart):
    """LLM lanes shared by every worker (see `LaneStore`)."""

    async def lane_acquire(self, lease: Lease, request: LaneRequest, now: int) -> Grant | Denied:
        """Take one call's share of its lane for the job `lease` holds, or say when to retry."""
        return await self._database.write(
            lambda connection: _acquire(connection, lease, request, now)
        )

    async def lane_settle(self, lease: Lease, settlement: LaneSettlement, now: int) -> None:
        """Settle the call the job `lease` holds a grant for; a freed slot is new work."""
        released = await self._database.write(
            lambda connection: _settle(connection, lease, settlement, now)
        )
        if released:
            self._new_work.announce()

    async def lane_release(self, lease: Lease) -> bool:
        """Free the slot of the grant `lease` holds; a freed slot is new work."""
        released = await self._database.write(lambda connection: _release(connection, lease))
        if released:
            self._new_work.announce()
        return released

    async def lanes(self, now: int) -> list[LaneStatus]:
        """Every lane that has had a call, by name, as of `now`."""
        return await self._database.read(lambda connection: _lanes(connection, now))
