"""Paid LLM calls on SQLite: opened under the tenant's budget, settled with their usage.

Each call runs in the store's `BEGIN IMMEDIATE` transaction, which holds the
database's write lock: the budget check and the insert of the new call see no other
writer between them, in this process or another.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace

from backroom.core.errors import LeaseLost
from backroom.core.job import Lease
from backroom.core.spend import BudgetWindow, CallIntent, CallOpening, CallState, OpenCall
from backroom.core.usage import AttemptUsage
from backroom.store.call_rows import CALL_COLUMNS, call_columns, open_call_from_row
from backroom.store.sqlite.part import SqlitePart
from backroom.store.sqlite.usage import record_usage_row

_HOLDS_LEASE = "SELECT 1 FROM jobs WHERE id = ? AND lease_token = ? AND state = 'running'"

_COMMITTED = """
SELECT (SELECT COALESCE(SUM(cost_pico_usd), 0) FROM llm_usage
        WHERE tenant = :tenant AND at >= :since AND at < :until),
       (SELECT COALESCE(SUM(reserved_pico_usd), 0) FROM llm_calls
        WHERE tenant = :tenant AND state = 'open'
          AND opened_at >= :open_since AND opened_at < :until)
"""

_OPEN = f"""
INSERT INTO llm_calls ({", ".join(CALL_COLUMNS)}) VALUES ({", ".join("?" * len(CALL_COLUMNS))})
ON CONFLICT (job_id, lease_token) DO UPDATE SET
    {", ".join(f"{column} = excluded.{column}" for column in CALL_COLUMNS[2:])},
    response_id = NULL, settled_at = NULL
"""

_RESPONSE = """
UPDATE llm_calls SET response_id = ?
WHERE job_id = ? AND lease_token = ? AND state = 'open'
"""

_SETTLE = """
UPDATE llm_calls SET state = ?, settled_at = ?
WHERE job_id = ? AND lease_token = ? AND state = 'open'
"""

_OPEN_CALLS = "SELECT * FROM llm_calls WHERE job_id = ? AND state = 'open' ORDER BY lease_token"


def _committed(
    connection: sqlite3.Connection, tenant: str, budget: BudgetWindow
) -> tuple[int, int]:
    """The tenant's spend in the window, and the reservations of its open calls."""
    parameters = {
        "tenant": tenant,
        "since": budget.since,
        "until": budget.until,
        "open_since": budget.open_since,
    }
    spent, reserved = connection.execute(_COMMITTED, parameters).fetchone()
    return int(spent), int(reserved)


def open_call(
    connection: sqlite3.Connection, lease: Lease, intent: CallIntent, budget: BudgetWindow | None
) -> CallOpening:
    """Record `intent` as an open call if it fits `budget` (`LeaseLost` if not held)."""
    if connection.execute(_HOLDS_LEASE, (lease.job_id, lease.token)).fetchone() is None:
        raise LeaseLost(f"job {lease.job_id} is no longer held under lease {lease.token}")
    found = CallOpening(True)
    if budget is not None:
        found = CallOpening(True, *_committed(connection, intent.tenant, budget))
        reserved = intent.reserved_pico_usd
        if reserved is None or not budget.fits(found.committed_pico_usd, reserved):
            return replace(found, opened=False)
    connection.execute(_OPEN, call_columns(intent))
    return found


def _execute(connection: sqlite3.Connection, sql: str, parameters: tuple[object, ...]) -> None:
    connection.execute(sql, parameters)


def settle_call(
    connection: sqlite3.Connection,
    key: tuple[int, int],
    usage: AttemptUsage | None,
    state: CallState,
) -> None:
    """Close the open call of the claim `key` (job id, lease token), storing its usage."""
    job_id, lease_token = key
    at = None if usage is None else usage.at
    closed = connection.execute(_SETTLE, (str(state), at, job_id, lease_token))
    if closed.rowcount and usage is not None:
        record_usage_row(connection, usage)


class SqliteCalls(SqlitePart):
    """Paid LLM calls' records (see `CallStore`)."""

    async def call_open(
        self, lease: Lease, intent: CallIntent, budget: BudgetWindow | None
    ) -> CallOpening:
        """Record `intent` as an open call if it fits `budget`, atomically."""
        return await self._database.write(
            lambda connection: open_call(connection, lease, intent, budget)
        )

    async def call_response(self, job_id: int, lease_token: int, response_id: str) -> None:
        """Note the provider's response id on the open call of that claim."""
        parameters = (response_id, job_id, lease_token)
        await self._database.write(lambda connection: _execute(connection, _RESPONSE, parameters))

    async def call_settle(
        self, job_id: int, lease_token: int, usage: AttemptUsage | None, state: CallState
    ) -> None:
        """Close the open call of that claim as `state`, with its usage, in one transaction."""
        await self._database.write(
            lambda connection: settle_call(connection, (job_id, lease_token), usage, state)
        )

    async def open_calls(self, job_id: int) -> list[OpenCall]:
        """The job's calls still open, oldest claim first."""
        return await self._database.read(
            lambda connection: [
                open_call_from_row(row) for row in connection.execute(_OPEN_CALLS, (job_id,))
            ]
        )
