"""The PostgreSQL store's lane, usage and tenant-budget methods, mixed into `PostgresStore`."""

from __future__ import annotations

from backroom.core.job import Lease
from backroom.core.lane_settlement import LaneSettlement
from backroom.core.lanes import Denied, Grant, LaneRequest
from backroom.core.usage import AttemptUsage, UsageTotals
from backroom.store.postgres import lanes as lane_sql
from backroom.store.postgres import tenants as tenant_sql
from backroom.store.postgres import usage as usage_sql
from backroom.store.postgres.database import PostgresDatabase
from backroom.store.records import LaneStatus, Tenant, UsageGroup, UsageQuery

_NOTIFY = "SELECT pg_notify($1, '')"


class PostgresLlmMethods:
    """Lanes and LLM usage on the store's database (see `Store` for each method)."""

    # Both are PostgresStore's.
    _database: PostgresDatabase
    _channel: str

    async def get_tenant(self, name: str) -> Tenant | None:
        """The tenant called `name`, or None."""
        async with self._database.connection() as connection:
            return await tenant_sql.get_tenant(connection, name)

    async def lane_acquire(self, lease: Lease, request: LaneRequest, now: int) -> Grant | Denied:
        """Take one call's share of its lane for the job `lease` holds, or say when to retry."""
        async with self._database.connection() as connection:
            return await lane_sql.acquire(connection, lease, request, now)

    async def lane_settle(self, lease: Lease, settlement: LaneSettlement, now: int) -> None:
        """Settle the call the job `lease` holds a grant for; a freed slot is new work."""
        async with self._database.connection() as connection:
            released = await lane_sql.settle(connection, lease, settlement, now)
            if released:
                await connection.execute(_NOTIFY, self._channel)

    async def lane_release(self, lease: Lease) -> bool:
        """Free the slot of the grant `lease` holds; a freed slot is new work."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(
                lane_sql.RELEASE, lease.job_id, lease.token, self._channel
            )
        return row is not None and bool(row["released"])

    async def lanes(self, now: int) -> list[LaneStatus]:
        """Every lane that has had a call, by name, as of `now`."""
        async with self._database.connection() as connection:
            return await lane_sql.lanes(connection, now)

    async def record_usage(self, usage: AttemptUsage) -> None:
        """Store what one attempt's call used; a repeat for the same attempt replaces it."""
        async with self._database.connection() as connection:
            await usage_sql.record_usage(connection, usage)

    async def usage_totals(self, job_id: int) -> UsageTotals:
        """What every attempt of the job used, summed."""
        async with self._database.connection() as connection:
            return await usage_sql.usage_totals(connection, job_id)

    async def spent_pico_usd(self, tenant: str, since: int, until: int) -> int:
        """The tenant's LLM spend on calls that ended in `[since, until)`."""
        async with self._database.connection() as connection:
            return await usage_sql.spent_pico_usd(connection, tenant, since, until)

    async def usage_groups(self, query: UsageQuery) -> list[UsageGroup]:
        """Usage summed per tenant and model, or tenant and UTC day."""
        async with self._database.connection() as connection:
            return await usage_sql.usage_groups(connection, query)
