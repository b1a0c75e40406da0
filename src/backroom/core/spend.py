"""Paid LLM calls as durable records: reserved before they are sent, settled after.

Every call a job makes is first written down as an intent (`CallIntent`): which job
and claim it belongs to, the model, and its reserved worst-case cost. Only then is
the request sent. When the answer arrives the record is settled with the real usage;
a call cut off by a crash stays open until the job's next attempt (or a reconciler)
settles it from the provider, or charges the reservation (`CallState.CHARGED`).

A tenant's daily budget counts what it spent and what its open calls may still
cost: a new call opens only if spent + open reservations + its own reservation stay
within the budget, checked and written in one store transaction, so any number of
concurrent workers cannot overshoot it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from backroom.core.job import Lease
from backroom.core.usage import DAY_MS, day_start, next_day_start

OPEN_CALL_HORIZON_MS = DAY_MS
"""How far back open calls count against a day's budget: an open call of yesterday
will most likely settle today, and be charged to today; an older one was cut off and
never reconciled, so it no longer holds budget."""


class CallState(enum.StrEnum):
    """Where a call's record stands."""

    OPEN = "open"
    """Reserved and (maybe) sent; its cost is not known yet."""
    SETTLED = "settled"
    """Its usage is recorded: what the provider reported, or an estimate so marked."""
    CHARGED = "charged"
    """Cut off before its usage was known: charged at its reservation."""


@dataclass(frozen=True, slots=True)
class CallIntent:
    """One call about to be sent, by the job's claim `lease_token`.

    `reserved_pico_usd` is its worst-case cost (the prompt's upper bound and every
    output token it may produce, at the model's prices); None for a model without
    prices, which no budget admits.
    """

    job_id: int
    lease_token: int
    attempt: int
    tenant: str
    provider: str
    model: str
    reserved_pico_usd: int | None
    opened_at: int

    def __post_init__(self) -> None:
        if (self.reserved_pico_usd or 0) < 0:
            raise ValueError(f"a reservation cannot be negative: {self}")

    @property
    def claim(self) -> Lease:
        """The job's claim that opened the call: its usage is recorded under it."""
        return Lease(self.job_id, self.lease_token, self.attempt)


@dataclass(frozen=True, slots=True)
class OpenCall:
    """A call record still open, with the provider's response id once it is known."""

    intent: CallIntent
    response_id: str | None = None


@dataclass(frozen=True, slots=True)
class BudgetWindow:
    """The budget a call must fit in: `limit_pico_usd` for calls in `[since, until)`."""

    limit_pico_usd: int
    since: int
    until: int

    @classmethod
    def daily(cls, limit_pico_usd: int, now: int) -> BudgetWindow:
        """The UTC day of `now` under a daily budget of `limit_pico_usd`."""
        return cls(limit_pico_usd, day_start(now), next_day_start(now))

    @property
    def open_since(self) -> int:
        """The earliest opening time of an open call that still holds this budget."""
        return self.since - OPEN_CALL_HORIZON_MS

    def fits(self, committed_pico_usd: int, reserved_pico_usd: int) -> bool:
        """Whether a call reserving `reserved_pico_usd` fits beside what is committed."""
        return committed_pico_usd + reserved_pico_usd <= self.limit_pico_usd


@dataclass(frozen=True, slots=True)
class CallOpening:
    """What opening a call found: whether it was opened, what the tenant had spent in
    the window and what its open calls held reserved before it (both 0 without a
    budget, which is not read then)."""

    opened: bool
    spent_pico_usd: int = 0
    open_pico_usd: int = 0

    @property
    def committed_pico_usd(self) -> int:
        """Spent plus reserved: what the budget had already promised."""
        return self.spent_pico_usd + self.open_pico_usd
