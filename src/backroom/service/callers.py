"""Who is asking: a tenant, or an admin.

A caller that is not an admin sees and acts on its own tenant's jobs only; another
tenant's job is "not found", exactly like a job that does not exist. A caller with a
read-only key looks but does not act: `refuse_read_only` says so before any change.
"""

from __future__ import annotations

from dataclasses import dataclass

from backroom.core.usage import DailyBudget
from backroom.service.replies import Reply, problem
from backroom.tasks import Submitter


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking: a tenant (with its cap of active jobs and its daily LLM budget),
    or an admin; `read_only` when its key may only look."""

    tenant: str
    admin: bool = False
    max_queued: int | None = None
    daily_budget: DailyBudget | None = None
    read_only: bool = False
    max_job_cost_pico_usd: int | None = None

    @property
    def scope(self) -> str | None:
        """The tenant whose jobs the caller may see; None (every tenant) for an admin."""
        return None if self.admin else self.tenant

    def submitter(self) -> Submitter:
        """The caller as a task's input check sees it: its tenant and spend caps."""
        return Submitter(
            self.tenant,
            has_budget=self.daily_budget is not None,
            has_cost_cap=self.max_job_cost_pico_usd is not None,
        )


def refuse_read_only(caller: Caller) -> Reply | None:
    """A 403 for a caller whose key may only look; None for one that may act."""
    if not caller.read_only:
        return None
    return problem(
        403,
        "this API key is read-only: it may look at jobs but not change anything",
        kind="read-only-key",
        title="Read-only key",
    )
