"""LLM usage in memory: one record per call, by its job and claim, summed exactly in integers."""

from __future__ import annotations

from backroom.core.usage import AttemptUsage, UsageTotals, total_usage
from backroom.store.memory.part import MemoryPart
from backroom.store.memory.tables import MemoryTables
from backroom.store.records import UsageGroup, UsageQuery
from backroom.store.usage_rows import merged_groups, usage_keys


def record_usage_row(tables: MemoryTables, usage: AttemptUsage) -> None:
    """Store one call's usage, replacing what was stored for the same claim."""
    tables.usage.setdefault(usage.job_id, {})[usage.lease_token] = usage


def _all(tables: MemoryTables) -> list[AttemptUsage]:
    return [usage for attempts in tables.usage.values() for usage in attempts.values()]


def _usage_totals(tables: MemoryTables, job_id: int) -> UsageTotals:
    """Every recorded call of the job, summed."""
    return total_usage(tables.usage.get(job_id, {}).values())


def spent_pico_usd(tables: MemoryTables, tenant: str, since: int, until: int) -> int:
    """The tenant's spend on calls that ended in `[since, until)`."""
    return sum(
        usage.cost_pico_usd or 0
        for usage in _all(tables)
        if usage.tenant == tenant and since <= usage.at < until
    )


def _usage_groups(tables: MemoryTables, query: UsageQuery) -> list[UsageGroup]:
    """The calls `query` selects, summed per distinct keys of its dimensions."""
    selected = (
        usage
        for usage in _all(tables)
        if query.since <= usage.at < query.until and query.tenant in (None, usage.tenant)
    )
    return merged_groups(
        (usage_keys(usage, query.group_by), UsageTotals().plus(usage)) for usage in selected
    )


class MemoryUsage(MemoryPart):
    """What LLM calls used and cost (see `UsageStore`)."""

    async def record_usage(self, usage: AttemptUsage) -> None:
        """Store what one call used; a repeat for the same claim replaces it."""
        record_usage_row(self._tables, usage)

    async def usage_totals(self, job_id: int) -> UsageTotals:
        """What every attempt of the job used, summed."""
        return _usage_totals(self._tables, job_id)

    async def spent_pico_usd(self, tenant: str, since: int, until: int) -> int:
        """The tenant's LLM spend on calls that ended in `[since, until)`."""
        return spent_pico_usd(self._tables, tenant, since, until)

    async def usage_groups(self, query: UsageQuery) -> list[UsageGroup]:
        """Usage summed per distinct keys of the query's dimensions."""
        return _usage_groups(self._tables, query)
