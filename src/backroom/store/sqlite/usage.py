"""LLM usage on SQLite: one row per attempt's call, summed per job, tenant, model or day.

SQLite sums integers exactly, and raises on overflow rather than wrap: a sum of cost
stays exact up to 9.2 million dollars of spend in one report.
"""

from __future__ import annotations

import sqlite3

from backroom.core.usage import DAY_MS, AttemptUsage, UsageTotals
from backroom.store.lane_rows import (
    TOTALS_SELECT,
    USAGE_COLUMNS,
    usage_columns,
    usage_group_from_row,
    usage_totals_from_row,
)
from backroom.store.records import UsageGroup, UsageGrouping, UsageQuery
from backroom.store.sqlite.part import SqlitePart

_RECORD = f"""
INSERT INTO llm_usage ({", ".join(USAGE_COLUMNS)})
VALUES ({", ".join("?" * len(USAGE_COLUMNS))})
ON CONFLICT (job_id, attempt) DO UPDATE SET
    {", ".join(f"{column} = excluded.{column}" for column in USAGE_COLUMNS[2:])}
"""

_JOB_TOTALS = f"SELECT {TOTALS_SELECT} FROM llm_usage WHERE job_id = ?"

_SPENT = """
SELECT COALESCE(SUM(cost_pico_usd), 0) FROM llm_usage
WHERE tenant = ? AND at >= ? AND at < ?
"""

_GROUPED_BY = {
    UsageGrouping.MODEL: "model",
    UsageGrouping.DAY: f"at - at % {DAY_MS}",
}

_GROUPS = """
SELECT tenant, {grouped} AS grouped, {totals}
FROM llm_usage
WHERE at >= :since AND at < :until AND (:tenant IS NULL OR tenant = :tenant)
GROUP BY tenant, grouped
ORDER BY tenant, grouped
"""


def _record_usage(connection: sqlite3.Connection, usage: AttemptUsage) -> None:
    """Store one attempt's usage, replacing what was stored for that attempt."""
    connection.execute(_RECORD, usage_columns(usage))


def _usage_totals(connection: sqlite3.Connection, job_id: int) -> UsageTotals:
    """Every recorded call of the job, summed."""
    return usage_totals_from_row(connection.execute(_JOB_TOTALS, (job_id,)).fetchone())


def _spent_pico_usd(connection: sqlite3.Connection, tenant: str, since: int, until: int) -> int:
    """The tenant's spend on calls that ended in `[since, until)`."""
    (spent,) = connection.execute(_SPENT, (tenant, since, until)).fetchone()
    return int(spent)


def _usage_groups(connection: sqlite3.Connection, query: UsageQuery) -> list[UsageGroup]:
    """The calls `query` selects, summed per tenant and model or day."""
    sql = _GROUPS.format(grouped=_GROUPED_BY[query.group_by], totals=TOTALS_SELECT)
    parameters = {"since": query.since, "until": query.until, "tenant": query.tenant}
    return [
        usage_group_from_row(row, query.group_by) for row in connection.execute(sql, parameters)
    ]


class SqliteUsage(SqlitePart):
    """What LLM calls used and cost (see `UsageStore`)."""

    async def record_usage(self, usage: AttemptUsage) -> None:
        """Store what one attempt's call used; a repeat for the same attempt replaces it."""
        await self._database.write(lambda connection: _record_usage(connection, usage))

    async def usage_totals(self, job_id: int) -> UsageTotals:
        """What every attempt of the job used, summed."""
        return await self._database.read(lambda connection: _usage_totals(connection, job_id))

    async def spent_pico_usd(self, tenant: str, since: int, until: int) -> int:
        """The tenant's LLM spend on calls that ended in `[since, until)`."""
        return await self._database.read(
            lambda connection: _spent_pico_usd(connection, tenant, since, until)
        )

    async def usage_groups(self, query: UsageQuery) -> list[UsageGroup]:
        """Usage summed per tenant and model, or tenant and UTC day."""
        return await self._database.read(lambda connection: _usage_groups(connection, query))
