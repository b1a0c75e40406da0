"""LLM usage on PostgreSQL: one row per call (by job and claim), summed per job, tenant or
report group.

PostgreSQL sums BIGINT into NUMERIC, so no sum of cost can overflow.
"""

from __future__ import annotations

from backroom.core.usage import AttemptUsage, UsageTotals
from backroom.store.postgres.part import PostgresPart
from backroom.store.records import UsageGroup, UsageQuery
from backroom.store.usage_rows import (
    TOTALS_SELECT,
    USAGE_COLUMNS,
    USAGE_KEY,
    grouped_select,
    keys_from_row,
    merged_groups,
    metadata_keys,
    usage_columns,
    usage_totals_from_row,
)

RECORD_USAGE = f"""
INSERT INTO llm_usage ({", ".join(USAGE_COLUMNS)})
VALUES ({", ".join(f"${number}" for number in range(1, len(USAGE_COLUMNS) + 1))})
ON CONFLICT ({USAGE_KEY}) DO UPDATE SET
    {", ".join(f"{column} = excluded.{column}" for column in USAGE_COLUMNS[2:])}
"""
"""Store one call's usage ($1.. in `USAGE_COLUMNS` order), replacing what its claim stored."""

_JOB_TOTALS = f"SELECT {TOTALS_SELECT} FROM llm_usage WHERE job_id = $1"

_SPENT = """
SELECT COALESCE(sum(cost_pico_usd), 0) FROM llm_usage
WHERE tenant = $1 AND at >= $2 AND at < $3
"""

_GROUPS = """
SELECT {grouped}, {totals}
FROM llm_usage
WHERE at >= $1 AND at < $2 AND ($3::text IS NULL OR tenant = $3)
GROUP BY {group_by}
"""
_FIRST_METADATA_PARAMETER = 4
"""$1-$3 are the range and tenant; each metadata key of a report is a parameter after."""


def _metadata_value(index: int, _key: str) -> str:
    """The JSON text of a metadata key, the key bound as a parameter of its own."""
    return f"(metadata::jsonb -> ${index + _FIRST_METADATA_PARAMETER}::text)::text"


class PostgresUsage(PostgresPart):
    """What LLM calls used and cost (see `UsageStore`)."""

    async def record_usage(self, usage: AttemptUsage) -> None:
        """Store one call's usage, replacing what was stored for the same claim."""
        async with self._database.connection() as connection:
            await connection.execute(RECORD_USAGE, *usage_columns(usage))

    async def usage_totals(self, job_id: int) -> UsageTotals:
        """Every recorded call of the job, summed."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(_JOB_TOTALS, job_id)
            assert row is not None  # an aggregate without GROUP BY always yields a row
            return usage_totals_from_row(row)

    async def spent_pico_usd(self, tenant: str, since: int, until: int) -> int:
        """The tenant's spend on calls that ended in `[since, until)`."""
        async with self._database.connection() as connection:
            return int(await connection.fetchval(_SPENT, tenant, since, until))

    async def usage_groups(self, query: UsageQuery) -> list[UsageGroup]:
        """The calls `query` selects, summed per distinct keys of its dimensions."""
        grouped, group_by = grouped_select(query.group_by, _metadata_value)
        sql = _GROUPS.format(grouped=grouped, totals=TOTALS_SELECT, group_by=group_by)
        keys = metadata_keys(query.group_by)
        async with self._database.connection() as connection:
            rows = await connection.fetch(sql, query.since, query.until, query.tenant, *keys)
        return merged_groups(
            (keys_from_row(row, query.group_by), usage_totals_from_row(row)) for row in rows
        )
