"""The part of the store protocol behind LLM usage and spend (`UsageStore`).

One record per call, keyed by its job and the lease token of the claim that made it
(never by attempt number, which a redrive starts again), kept when jobs are pruned:
the spend record. Reports group it by tenant, provider, model, prompt version, day
and job metadata keys.
"""

from __future__ import annotations

from typing import Protocol

from backroom.core.usage import AttemptUsage, UsageTotals
from backroom.store.records import UsageGroup, UsageQuery


class UsageStore(Protocol):
    """What LLM calls used and cost."""

    async def record_usage(self, usage: AttemptUsage) -> None:
        """Store what one call used; a repeat for the same claim (job, lease token)
        replaces it, and every other call of the job, before a redrive too, is kept."""

    async def usage_totals(self, job_id: int) -> UsageTotals:
        """What every attempt of the job used, summed (zero when nothing was recorded)."""

    async def spent_pico_usd(self, tenant: str, since: int, until: int) -> int:
        """The tenant's LLM spend on calls that ended in `[since, until)`, in pico-dollars."""

    async def usage_groups(self, query: UsageQuery) -> list[UsageGroup]:
        """Usage summed per distinct keys of the query's dimensions, ordered by them."""
