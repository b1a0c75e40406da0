"""Moving a running job to another lane (a fallback), in memory (`MemoryLaneMoves`)."""

from __future__ import annotations

from backroom.core.job import Lease
from backroom.store.memory.part import MemoryPart
from backroom.store.memory.tables import MemoryTables


def _move_lane(tables: MemoryTables, lease: Lease, lane: str, now: int, attempt: bool) -> bool:
    """Point the job `lease` holds (and with `attempt` its running attempt) at `lane`;
    False if it is not held."""
    row = tables.held(lease)
    if row is None:
        return False
    with tables.changing(row):
        row.lane, row.lane_grant, row.updated_at = lane, None, now
    for running in tables.attempts.get(lease.job_id, ()) if attempt else ():
        if running.lease_token == lease.token:
            running.lane = lane
    return True


class MemoryLaneMoves(MemoryPart):
    """A job's current lane, changed by the worker that holds it (see `LaneStore`)."""

    async def move_lane(self, lease: Lease, lane: str, now: int, *, attempt: bool) -> bool:
        """Move the job `lease` holds (with `attempt`, its attempt too) to `lane`;
        False if not held."""
        moved = _move_lane(self._tables, lease, lane, now, attempt)
        if moved:
            self._new_work.announce()  # a grant it held is freed
        return moved
