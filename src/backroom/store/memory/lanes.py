"""Lanes in memory: acquiring and settling calls, listing lanes, and the claim's view of them.

The arithmetic is the core's, through `lane_rows` as for the SQL stores; a lane's
calls in flight are counted from the running jobs that hold a grant, never stored.
"""

from __future__ import annotations

from collections import Counter

from backroom.core.errors import LeaseLost
from backroom.core.job import Lease
from backroom.core.lane_settlement import LaneSettlement
from backroom.core.lanes import CREDIT_PER_UNIT, Denied, Grant, LaneRequest
from backroom.store.lane_rows import LaneWrite, lane_decision, lane_settled, lane_status
from backroom.store.memory.part import MemoryPart
from backroom.store.memory.tables import LaneRow, MemoryTables
from backroom.store.records import LaneStatus


def calls_in_flight(tables: MemoryTables) -> Counter[str]:
    """Each lane's calls in flight: its running jobs that hold a grant."""
    return Counter(
        row.lane
        for row in tables.running.values()
        if row.lane is not None and row.lane_grant is not None
    )


def full_lanes(tables: MemoryTables) -> set[str]:
    """The lanes with no free slot."""
    in_flight = calls_in_flight(tables)
    return {
        name
        for name, lane in tables.lanes.items()
        if lane.max_concurrency is not None and lane.max_concurrency <= in_flight[name]
    }


def _room(lane: LaneRow, in_flight: int, now: int, limit: int) -> int:
    """How many of the lane's jobs one claim of at most `limit` jobs takes.

    None while it is paused or every slot is taken (0); else as many as its buckets hold
    calls of its last call's estimate, and always one, whose acquire pauses the lane
    if it does not fit after all. The same sum as the SQL stores' `lane_room`.
    """
    if lane.paused_until > now:
        return 0
    if lane.max_concurrency is not None and lane.max_concurrency <= in_flight:
        return 0
    slots = limit if lane.max_concurrency is None else lane.max_concurrency - in_flight
    elapsed = max(0, now - lane.updated_at)
    requests = _calls_held(lane.request_credit, lane.requests_per_minute, elapsed, 1, limit)
    tokens = _calls_held(
        lane.token_credit, lane.tokens_per_minute, elapsed, max(1, lane.call_tokens), limit
    )
    return max(1, min(slots, requests, tokens))


def _calls_held(credit: int, per_minute: int | None, elapsed: int, units: int, limit: int) -> int:
    """How many calls of `units` a bucket refilled for `elapsed` ms holds (`limit`: no limit)."""
    if per_minute is None:
        return limit
    refilled = min(per_minute * CREDIT_PER_UNIT, credit + elapsed * per_minute)
    return refilled // (CREDIT_PER_UNIT * units)


def lane_rooms(tables: MemoryTables, now: int, limit: int) -> dict[str, int]:
    """Every known lane's room in a claim (see `_room`); a lane never used has no row
    and no limit."""
    in_flight = calls_in_flight(tables)
    return {name: _room(lane, in_flight[name], now, limit) for name, lane in tables.lanes.items()}


def _save(tables: MemoryTables, write: LaneWrite) -> None:
    tables.lanes[write.name] = LaneRow(*write.columns())


def _acquire(tables: MemoryTables, lease: Lease, request: LaneRequest, now: int) -> Grant | Denied:
    """Take a call's share of its lane for the job `lease` holds, or say when to retry."""
    lane = tables.lanes.get(request.lane)
    in_flight = calls_in_flight(tables)[request.lane]
    write, decision = lane_decision(lane, in_flight, request, now)
    if isinstance(decision, Grant):
        row = tables.held(lease)
        if row is None:
            raise LeaseLost(f"job {lease.job_id} is no longer held under lease {lease.token}")
        row.lane_grant = decision.tokens
    _save(tables, write)
    return decision


def _release(tables: MemoryTables, lease: Lease) -> bool:
    """Free the slot of the grant `lease` holds; True if it held one."""
    row = tables.held(lease)
    if row is None or row.lane_grant is None:
        return False
    row.lane_grant = None
    return True


def _settle(tables: MemoryTables, lease: Lease, settlement: LaneSettlement, now: int) -> bool:
    """Settle the call `lease` holds a grant for; True if a grant was released."""
    row = tables.held(lease)
    granted = None if row is None else row.lane_grant
    _release(tables, lease)
    lane = tables.lanes.get(settlement.lane)
    if lane is not None:
        in_flight = calls_in_flight(tables)[settlement.lane]
        _save(tables, lane_settled(lane, in_flight, settlement, granted, now))
    return granted is not None


def _lanes(tables: MemoryTables, now: int) -> list[LaneStatus]:
    """Every lane that has had a call, by name, refilled to `now`."""
    in_flight = calls_in_flight(tables)
    return [lane_status(tables.lanes[name], in_flight[name], now) for name in sorted(tables.lanes)]


class MemoryLanes(MemoryPart):
    """LLM lanes shared by every worker (see `LaneStore`)."""

    async def lane_acquire(self, lease: Lease, request: LaneRequest, now: int) -> Grant | Denied:
        """Take one call's share of its lane for the job `lease` holds, or say when to retry."""
        return _acquire(self._tables, lease, request, now)

    async def lane_settle(self, lease: Lease, settlement: LaneSettlement, now: int) -> None:
        """Settle the call the job `lease` holds a grant for; a freed slot is new work."""
        if _settle(self._tables, lease, settlement, now):
            self._new_work.announce()

    async def lane_release(self, lease: Lease) -> bool:
        """Free the slot of the grant `lease` holds; a freed slot is new work."""
        released = _release(self._tables, lease)
        if released:
            self._new_work.announce()
        return released

    async def lanes(self, now: int) -> list[LaneStatus]:
        """Every lane that has had a call, by name, as of `now`."""
        return _lanes(self._tables, now)
