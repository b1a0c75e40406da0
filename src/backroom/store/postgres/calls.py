"""Paid LLM calls on PostgreSQL: opened under the tenant's budget, settled with their usage.

Opening a call under a budget locks the tenant's row (`FOR UPDATE`) for the check
and the insert: concurrent openings of one tenant, from any worker on any machine,
take turns, each seeing the calls the last one opened.
"""

from __future__ import annotations

from dataclasses import replace

from backroom.core.job import Lease
from backroom.core.spend import BudgetWindow, CallIntent, CallOpening, CallState, OpenCall
from backroom.core.usage import AttemptUsage
from backroom.store.call_rows import CALL_COLUMNS, call_columns, open_call_from_row
from backroom.store.postgres.part import PostgresPart, lease_lost
from backroom.store.postgres.usage import RECORD_USAGE
from backroom.store.usage_rows import usage_columns

_HOLDS_LEASE = "SELECT 1 FROM jobs WHERE id = $1 AND lease_token = $2 AND state = 'running'"

LOCK_TENANT = "SELECT 1 FROM tenants WHERE name = $1 FOR UPDATE"
"""Lock a tenant's row: its calls' openings under a budget take turns."""

COMMITTED = """
SELECT (SELECT COALESCE(sum(cost_pico_usd), 0) FROM llm_usage
        WHERE tenant = $1 AND at >= $2 AND at < $3) AS spent,
       (SELECT COALESCE(sum(reserved_pico_usd), 0) FROM llm_calls
        WHERE tenant = $1 AND state = 'open' AND opened_at >= $4 AND opened_at < $3) AS reserved
"""
"""A tenant's spend in a budget window and its open calls' reservations."""

_PLACEHOLDERS = ", ".join(f"${number}" for number in range(1, len(CALL_COLUMNS) + 1))

OPEN_CALL = f"""
INSERT INTO llm_calls ({", ".join(CALL_COLUMNS)}) VALUES ({_PLACEHOLDERS})
ON CONFLICT (job_id, lease_token) DO UPDATE SET
    {", ".join(f"{column} = excluded.{column}" for column in CALL_COLUMNS[2:])},
    response_id = NULL, settled_at = NULL
"""
"""Record a call as open (an earlier record of the same claim replaced)."""

_RESPONSE = """
UPDATE llm_calls SET response_id = $1
WHERE job_id = $2 AND lease_token = $3 AND state = 'open'
"""

_SETTLE = """
UPDATE llm_calls SET state = $1, settled_at = $2
WHERE job_id = $3 AND lease_token = $4 AND state = 'open'
RETURNING 1
"""

_OPEN_CALLS = "SELECT * FROM llm_calls WHERE job_id = $1 AND state = 'open' ORDER BY lease_token"


class PostgresCalls(PostgresPart):
    """Paid LLM calls' records (see `CallStore`)."""

    async def call_open(
        self, lease: Lease, intent: CallIntent, budget: BudgetWindow | None
    ) -> CallOpening:
        """Record `intent` as an open call if it fits `budget`, atomically."""
        async with self._database.transaction() as connection:
            if await connection.fetchval(_HOLDS_LEASE, lease.job_id, lease.token) is None:
                raise lease_lost(lease)
            found = CallOpening(True)
            if budget is not None:
                await connection.execute(LOCK_TENANT, intent.tenant)
                row = await connection.fetchrow(
                    COMMITTED, intent.tenant, budget.since, budget.until, budget.open_since
                )
                assert row is not None  # a select of two scalar subqueries yields a row
                found = CallOpening(True, int(row["spent"]), int(row["reserved"]))
                reserved = intent.reserved_pico_usd
                if reserved is None or not budget.fits(found.committed_pico_usd, reserved):
                    return replace(found, opened=False)
            await connection.execute(OPEN_CALL, *call_columns(intent))
            return found

    async def call_response(self, job_id: int, lease_token: int, response_id: str) -> None:
        """Note the provider's response id on the open call of that claim."""
        async with self._database.connection() as connection:
            await connection.execute(_RESPONSE, response_id, job_id, lease_token)

    async def call_settle(
        self, job_id: int, lease_token: int, usage: AttemptUsage | None, state: CallState
    ) -> None:
        """Close the open call of that claim as `state`, with its usage, in one transaction."""
        at = None if usage is None else usage.at
        async with self._database.transaction() as connection:
            closed = await connection.fetchval(_SETTLE, str(state), at, job_id, lease_token)
            if closed is not None and usage is not None:
                await connection.execute(RECORD_USAGE, *usage_columns(usage))

    async def open_calls(self, job_id: int) -> list[OpenCall]:
        """The job's calls still open, oldest claim first."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_OPEN_CALLS, job_id)
            return [open_call_from_row(row) for row in rows]
