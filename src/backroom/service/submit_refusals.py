"""The refusals a submission may earn from the store: its key reused with another body
(422), its tenant at its cap of queued jobs or out of daily LLM budget (429)."""

from __future__ import annotations

from backroom.core.errors import IdempotencyConflict
from backroom.core.usage import DailyBudget, day_start, next_day_start
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.documents import usd_text
from backroom.service.replies import Reply, problem


def key_reused(conflict: IdempotencyConflict) -> Reply:
    """The 422 for an idempotency key already used with another submission."""
    return problem(
        422,
        f"Idempotency-Key {conflict.key!r} was already used with a different request body",
        kind="idempotency-conflict",
        title="Idempotency key reused",
        job_id=conflict.job_id,
    )


def queue_full(caller: Caller, retry_after_s: int) -> Reply:
    """The 429 for a caller whose tenant is at its cap of queued and running jobs."""
    return problem(
        429,
        f"tenant {caller.tenant!r} has {caller.max_queued} jobs queued or running, its cap",
        kind="queue-full",
        title="Too many queued jobs",
        headers={"Retry-After": str(retry_after_s), "Cache-Control": "no-store"},
    )


async def budget_spent(app: AppParts, caller: Caller, budget: DailyBudget) -> Reply | None:
    """A 429 if the caller has spent today's budget (UTC), retried at the next day."""
    now = app.clock.now()
    spent = await app.store.spent_pico_usd(caller.tenant, day_start(now), next_day_start(now))
    if not budget.exhausted(spent):
        return None
    wait_s = -(-(next_day_start(now) - now) // 1000)
    return problem(
        429,
        f"tenant {caller.tenant!r} has spent ${usd_text(spent)} of its daily LLM budget of "
        f"${usd_text(budget.limit_pico_usd)}; it refills at 00:00 UTC",
        kind="budget-exhausted",
        title="Daily budget spent",
        headers={"Retry-After": str(wait_s), "Cache-Control": "no-store"},
    )
