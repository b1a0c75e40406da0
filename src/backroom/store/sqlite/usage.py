"""LLM usage on SQLite: one row per call (by job and claim), summed per job, tenant or report group.

SQLite sums integers exactly, and raises on overflow rather than wrap: a sum of cost
stays exact up to 9.2 million dollars of spend in one report.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from backroom.core.usage import AttemptUsage, UsageTotals
from backroom.store.records import UsageGroup, UsageQuery
from backroom.store.sqlite.part import SqlitePart
from backroom.store.usage_rows import (
    TOTALS_SELECT,
    USAGE_COLUMNS,
    USAGE_KEY,
    grouped_select,
    keys_from_row,
    merged_groups,
    metadata_keys,
    metadata_path,
    usage_columns,
    usage_totals_from_row,
)

_RECORD = f"""
INSERT INTO llm_usage ({", ".join(USAGE_COLUMNS)})
VALUES ({", ".join("?" * len(USAGE_COLUMNS))})
ON CONFLICT ({USAGE_KEY}) DO UPDATE SET
    {", ".join(f"{column} = excluded.{column}" for column in USAGE_COLUMNS[2:])}
"""

_JOB_TOTALS = f"SELECT {TOTALS_SELECT} FROM llm_usage WHERE job_id = ?"

_SPENT = """
SELECT COALESCE(SUM(cost_pico_usd), 0) FROM llm_usage
WHERE tenant = ? AND at >= ? AND at < ?
"""

_GROUPS = """
SELECT {grouped}, {totals}
FROM llm_usage
WHERE at >= :since AND at < :until AND (:tenant IS NULL OR tenant = :tenant)
GROUP BY {group_by}
"""


def _metadata_value(index: int, _key: str) -> str:
    """The JSON text of a metadata key: its quoted path is the parameter `:meta{index}`."""
    return f"metadata -> :meta{index}"


def record_usage_row(connection: sqlite3.Connection, usage: AttemptUsage) -> None:
    """Store one call's usage, replacing what was stored for the same claim."""
    connection.execute(_RECORD, usage_columns(usage))


def record_usage_rows(connection: sqlite3.Connection, usages: Sequence[AttemptUsage]) -> None:
    """Store calls' usage in one `executemany`, replacing what was stored for each claim."""
    connection.executemany(_RECORD, [usage_columns(usage) for usage in usages])


def _usage_totals(connection: sqlite3.Connection, job_id: int) -> UsageTotals:
    """Every recorded call of the job, summed."""
    return usage_totals_from_row(connection.execute(_JOB_TOTALS, (job_id,)).fetchone())


def _spent_pico_usd(connection: sqlite3.Connection, tenant: str, since: int, until: int) -> int:
    """The tenant's spend on calls that ended in `[since, until)`."""
    (spent,) = connection.execute(_SPENT, (tenant, since, until)).fetchone()
    return int(spent)


def _usage_groups(connection: sqlite3.Connection, query: UsageQuery) -> list[UsageGroup]:
    """The calls `query` selects, summed per distinct keys of its dimensions."""
    grouped, group_by = grouped_select(query.group_by, _metadata_value)
    sql = _GROUPS.format(grouped=grouped, totals=TOTALS_SELECT, group_by=group_by)
    parameters: dict[str, Any] = {
        "since": query.since,
        "until": query.until,
        "tenant": query.tenant,
    }
    for index, key in enumerate(metadata_keys(query.group_by)):
        parameters[f"meta{index}"] = metadata_path(key)
    rows = connection.execute(sql, parameters)
    return merged_groups(
        (keys_from_row(row, query.group_by), usage_totals_from_row(row)) for row in rows
    )


class SqliteUsage(SqlitePart):
    """What LLM calls used and cost (see `UsageStore`)."""

    async def record_usage(self, usage: AttemptUsage) -> None:
        """Store what one call used; a repeat for the same claim replaces it."""
        await self._database.write(lambda connection: record_usage_row(connection, usage))

    async def usage_totals(self, job_id: int) -> UsageTotals:
        """What every attempt of the job used, summed."""
        return await self._database.read(lambda connection: _usage_totals(connection, job_id))

    async def spent_pico_usd(self, tenant: str, since: int, until: int) -> int:
        """The tenant's LLM spend on calls that ended in `[since, until)`."""
        return await self._database.read(
            lambda connection: _spent_pico_usd(connection, tenant, since, until)
        )

    async def usage_groups(self, query: UsageQuery) -> list[UsageGroup]:
        """Usage summed per distinct keys of the query's dimensions."""
        return await self._database.read(lambda connection: _usage_groups(connection, query))
