"""Paid LLM calls in memory: opened under the tenant's budget, settled with their usage.

Each method runs to its end without awaiting, so the budget check and the opening
are one step, as a transaction is.
"""

from __future__ import annotations

import dataclasses

from backroom.core.errors import LeaseLost
from backroom.core.job import Lease
from backroom.core.spend import BudgetWindow, CallIntent, CallOpening, CallState, OpenCall
from backroom.core.usage import AttemptUsage
from backroom.store.memory.part import MemoryPart
from backroom.store.memory.tables import CallRow, MemoryTables
from backroom.store.memory.usage import record_usage_row, spent_pico_usd


def _opening(tables: MemoryTables, tenant: str, budget: BudgetWindow) -> CallOpening:
    """The tenant's spend in the window, and the reservations of its open calls."""
    spent = spent_pico_usd(tables, tenant, budget.since, budget.until)
    return CallOpening(
        True,
        spent,
        sum(
            call.intent.reserved_pico_usd or 0
            for call in tables.calls.values()
            if call.state is CallState.OPEN
            and call.intent.tenant == tenant
            and budget.open_since <= call.intent.opened_at < budget.until
        ),
    )


def open_call(
    tables: MemoryTables, lease: Lease, intent: CallIntent, budget: BudgetWindow | None
) -> CallOpening:
    """Record `intent` as an open call if it fits `budget` (`LeaseLost` if not held)."""
    if tables.held(lease) is None:
        raise LeaseLost(f"job {lease.job_id} is no longer held under lease {lease.token}")
    found = CallOpening(True)
    if budget is not None:
        found = _opening(tables, intent.tenant, budget)
        reserved = intent.reserved_pico_usd
        if reserved is None or not budget.fits(found.committed_pico_usd, reserved):
            return dataclasses.replace(found, opened=False)
    tables.calls[intent.job_id, intent.lease_token] = CallRow(intent, CallState.OPEN)
    return found


class MemoryCalls(MemoryPart):
    """Paid LLM calls' records (see `CallStore`)."""

    async def call_open(
        self, lease: Lease, intent: CallIntent, budget: BudgetWindow | None
    ) -> CallOpening:
        """Record `intent` as an open call if it fits `budget`, atomically."""
        return open_call(self._tables, lease, intent, budget)

    async def call_response(self, job_id: int, lease_token: int, response_id: str) -> None:
        """Note the provider's response id on the open call of that claim."""
        call = self._tables.calls.get((job_id, lease_token))
        if call is not None and call.state is CallState.OPEN:
            call.response_id = response_id

    async def call_settle(
        self, job_id: int, lease_token: int, usage: AttemptUsage | None, state: CallState
    ) -> None:
        """Close the open call of that claim as `state`, with its usage."""
        call = self._tables.calls.get((job_id, lease_token))
        if call is None or call.state is not CallState.OPEN:
            return
        call.state = state
        if usage is not None:
            record_usage_row(self._tables, usage)

    async def open_calls(self, job_id: int) -> list[OpenCall]:
        """The job's calls still open, oldest claim first."""
        return [
            OpenCall(call.intent, call.response_id)
            for (call_job, _), call in sorted(self._tables.calls.items())
            if call_job == job_id and call.state is CallState.OPEN
        ]
