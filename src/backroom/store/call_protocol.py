"""The part of the store protocol behind paid LLM calls' records (`CallStore`).

See `backroom.core.spend`: a call is opened (reserved, under the tenant's budget)
before it is sent and settled after, so spend is never lost and budgets are hard.
"""

from __future__ import annotations

from typing import Protocol

from backroom.core.job import Lease
from backroom.core.spend import BudgetWindow, CallIntent, CallOpening, CallState, OpenCall
from backroom.core.usage import AttemptUsage


class CallStore(Protocol):
    """Paid LLM calls, recorded before they are sent and settled after."""

    async def call_open(
        self, lease: Lease, intent: CallIntent, budget: BudgetWindow | None
    ) -> CallOpening:
        """Record `intent` as an open call if it fits `budget` (None: no budget).

        Atomic: the tenant's spend in the window plus its open reservations plus this
        reservation must stay within the limit, and no concurrent opening can slip in
        between the check and the write. A repeat for the same claim replaces the
        record. Raises `LeaseLost` if `lease` is no longer held.
        """

    async def call_response(self, job_id: int, lease_token: int, response_id: str) -> None:
        """Note the provider's response id on the open call of that claim."""

    async def call_settle(
        self, job_id: int, lease_token: int, usage: AttemptUsage | None, state: CallState
    ) -> None:
        """Close the call of that claim as `state`, storing `usage` (if any) with it,
        in one transaction; closing a call that is not open changes nothing."""

    async def open_calls(self, job_id: int) -> list[OpenCall]:
        """The job's calls still open, oldest claim first."""
