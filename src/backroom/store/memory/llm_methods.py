"""The memory store's lane and usage methods, mixed into `MemoryStore`."""

from __future__ import annotations

from backroom.core.job import Lease
from backroom.core.lane_settlement import LaneSettlement
from backroom.core.lanes import Denied, Grant, LaneRequest
from backroom.core.usage import AttemptUsage, UsageTotals
from backroom.store.memory import lanes as lane_memory
from backroom.store.memory import usage as usage_memory
from backroom.store.memory.tables import MemoryTables
from backroom.store.new_work import NewWorkHints
from backroom.store.records import LaneStatus, UsageGroup, UsageQuery


class MemoryLlmMethods:
    """Lanes and LLM usage on the store's tables (see `Store` for each method)."""

    # Both are MemoryStore's.
    _tables: MemoryTables
    _new_work: NewWorkHints

    async def lane_acquire(self, lease: Lease, request: LaneRequest, now: int) -> Grant | Denied:
        """Take one call's share of its lane for the job `lease` holds, or say when to retry."""
        return lane_memory.acquire(self._tables, lease, request, now)

    async def lane_settle(self, lease: Lease, settlement: LaneSettlement, now: int) -> None:
        """Settle the call the job `lease` holds a grant for; a freed slot is new work."""
        if lane_memory.settle(self._tables, lease, settlement, now):
            self._new_work.announce()

    async def lane_release(self, lease: Lease) -> bool:
        """Free the slot of the grant `lease` holds; a freed slot is new work."""
        released = lane_memory.release(self._tables, lease)
        if released:
            self._new_work.announce()
        return released

    async def lanes(self, now: int) -> list[LaneStatus]:
        """Every lane that has had a call, by name, as of `now`."""
        return lane_memory.lanes(self._tables, now)

    async def record_usage(self, usage: AttemptUsage) -> None:
        """Store what one attempt's call used; a repeat for the same attempt replaces it."""
        usage_memory.record_usage(self._tables, usage)

    async def usage_totals(self, job_id: int) -> UsageTotals:
        """What every attempt of the job used, summed."""
        return usage_memory.usage_totals(self._tables, job_id)

    async def spent_pico_usd(self, tenant: str, since: int, until: int) -> int:
        """The tenant's LLM spend on calls that ended in `[since, until)`."""
        return usage_memory.spent_pico_usd(self._tables, tenant, since, until)

    async def usage_groups(self, query: UsageQuery) -> list[UsageGroup]:
        """Usage summed per tenant and model, or tenant and UTC day."""
        return usage_memory.usage_groups(self._tables, query)
