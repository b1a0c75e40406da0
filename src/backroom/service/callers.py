"""Who is asking: a tenant, or an admin.

A caller that is not an admin sees and acts on its own tenant's jobs only; another
tenant's job is "not found", exactly like a job that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from backroom.core.usage import DailyBudget


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking: a tenant (with its cap of active jobs and its daily LLM budget),
    or an admin."""

    tenant: str
    admin: bool = False
    max_queued: int | None = None
    daily_budget: DailyBudget | None = None

    @property
    def scope(self) -> str | None:
        """The tenant whose jobs the caller may see; None (every tenant) for an admin."""
        return None if self.admin else self.tenant
