"""The SQLite store's lane, usage and tenant-budget methods, mixed into `SqliteStore`."""

from __future__ import annotations

from collections.abc import Callable

from backroom.core.job import Lease
from backroom.core.lane_settlement import LaneSettlement
from backroom.core.lanes import Denied, Grant, LaneRequest
from backroom.core.usage import AttemptUsage, UsageTotals
from backroom.store.records import LaneStatus, Tenant, UsageGroup, UsageQuery
from backroom.store.sqlite import lanes as lane_sql
from backroom.store.sqlite import tenants as tenant_sql
from backroom.store.sqlite import usage as usage_sql
from backroom.store.sqlite.connection import SqliteDatabase


class SqliteLlmMethods:
    """Lanes and LLM usage on the store's database (see `Store` for each method)."""

    # Both are SqliteStore's.
    _database: SqliteDatabase
    _announce_new_work: Callable[[], None]

    async def get_tenant(self, name: str) -> Tenant | None:
        """The tenant called `name`, or None."""
        return await self._database.read(lambda connection: tenant_sql.get_tenant(connection, name))

    async def lane_acquire(self, lease: Lease, request: LaneRequest, now: int) -> Grant | Denied:
        """Take one call's share of its lane for the job `lease` holds, or say when to retry."""
        return await self._database.write(
            lambda connection: lane_sql.acquire(connection, lease, request, now)
        )

    async def lane_settle(self, lease: Lease, settlement: LaneSettlement, now: int) -> None:
        """Settle the call the job `lease` holds a grant for; a freed slot is new work."""
        released = await self._database.write(
            lambda connection: lane_sql.settle(connection, lease, settlement, now)
        )
        if released:
            self._announce_new_work()

    async def lane_release(self, lease: Lease) -> bool:
        """Free the slot of the grant `lease` holds; a freed slot is new work."""
        released = await self._database.write(
            lambda connection: lane_sql.release(connection, lease)
        )
        if released:
            self._announce_new_work()
        return released

    async def lanes(self, now: int) -> list[LaneStatus]:
        """Every lane that has had a call, by name, as of `now`."""
        return await self._database.read(lambda connection: lane_sql.lanes(connection, now))

    async def record_usage(self, usage: AttemptUsage) -> None:
        """Store what one attempt's call used; a repeat for the same attempt replaces it."""
        await self._database.write(lambda connection: usage_sql.record_usage(connection, usage))

    async def usage_totals(self, job_id: int) -> UsageTotals:
        """What every attempt of the job used, summed."""
        return await self._database.read(
            lambda connection: usage_sql.usage_totals(connection, job_id)
        )

    async def spent_pico_usd(self, tenant: str, since: int, until: int) -> int:
        """The tenant's LLM spend on calls that ended in `[since, until)`."""
        return await self._database.read(
            lambda connection: usage_sql.spent_pico_usd(connection, tenant, since, until)
        )

    async def usage_groups(self, query: UsageQuery) -> list[UsageGroup]:
        """Usage summed per tenant and model, or tenant and UTC day."""
        return await self._database.read(
            lambda connection: usage_sql.usage_groups(connection, query)
        )
