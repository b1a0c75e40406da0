"""What LLM calls used and cost, per attempt and in total, and the tenant's budget day.

Money is stored as whole pico-dollars (10^-12 US dollars) in a plain integer, so
both SQL backends can sum it exactly and `Decimal` dollars convert both ways without
loss. Micro-dollars would not do: one gpt-4o-mini input token costs 0.15 of them. A
cost is exact in pico-dollars whenever the prices per million tokens have at most six
decimal places, which covers every published price list; a finer amount is rounded
up, so spend is never under-counted.

Budgets run per UTC day: from midnight UTC to the next, `DAY_MS` milliseconds later
(Unix time has no leap seconds, so every day is exactly that long).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_CEILING, Decimal
from typing import Any

PICO_USD_PER_USD = 10**12
DAY_MS = 86_400_000


def pico_usd(amount_usd: Decimal) -> int:
    """`amount_usd` as whole pico-dollars, rounded up if it has more than 12 decimals.

    >>> pico_usd(Decimal("0.00000015")), pico_usd(Decimal("2.5"))
    (150000, 2500000000000)
    """
    if not amount_usd.is_finite():
        raise ValueError(f"not an amount of money: {amount_usd}")
    return int((amount_usd * PICO_USD_PER_USD).to_integral_value(ROUND_CEILING))


def usd(amount_pico_usd: int) -> Decimal:
    """Whole pico-dollars as exact `Decimal` dollars.

    >>> usd(150000), usd(2500000000000)
    (Decimal('1.5E-7'), Decimal('2.5'))
    """
    return Decimal(amount_pico_usd) / PICO_USD_PER_USD


@dataclass(frozen=True, slots=True)
class AttemptUsage:
    """What one attempt's LLM call used, charged to the job's tenant.

    `cached_tokens` is the part of `input_tokens` served from the provider's prompt
    cache, `cache_write_tokens` the part written to it (Anthropic bills a write above
    the input price, a read below it). `cost_pico_usd` is None when the model has no
    prices configured: the call is counted, but spends nothing against a budget. `at`
    is when the call ended (ms since the epoch), which decides the budget day it counts
    against. `estimated` marks counts the provider did not report (a response without
    usage, a call cut off by a crash): backroom's own upper estimate, never a silent 0.

    A call is keyed by its job and `lease_token`, the claim that made it: a job's lease
    token only goes up (a redrive restarts `attempt` at 1, never the token), so every
    call of a job keeps its own record and its spend. Usage recorded before migration
    018 whose claim was not known carries `-attempt` there, which no claim ever has.
    """

    job_id: int
    attempt: int
    tenant: str
    model: str
    prompt_version: str | None
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    cost_pico_usd: int | None
    at: int
    provider: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    estimated: bool = False
    cache_write_tokens: int = 0
    lease_token: int = field(kw_only=True)

    def __post_init__(self) -> None:
        counts = (
            self.input_tokens,
            self.cached_tokens,
            self.output_tokens,
            self.cache_write_tokens,
        )
        if min(counts) < 0 or (self.cost_pico_usd or 0) < 0:
            raise ValueError(f"token counts and cost must not be negative: {self}")


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """Tokens and cost summed over calls: a job's attempts, or a tenant's day.

    `cost_pico_usd` sums the priced calls; `unpriced_calls` counts the others (a model
    without prices), whose cost is unknown;
    `estimated_calls` counts those whose counts are backroom's estimates.
    """

    calls: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost_pico_usd: int = 0
    unpriced_calls: int = 0
    estimated_calls: int = 0
    cache_write_tokens: int = 0

    @property
    def cost_usd(self) -> Decimal:
        """The summed cost of the priced calls in exact dollars."""
        return usd(self.cost_pico_usd)

    @property
    def known_cost_pico_usd(self) -> int | None:
        """The whole cost, or None when a call had no price (the cost is unknown).

        >>> UsageTotals(calls=2, cost_pico_usd=5).known_cost_pico_usd
        5
        >>> UsageTotals(calls=2, cost_pico_usd=5, unpriced_calls=1).known_cost_pico_usd is None
        True
        """
        return None if self.unpriced_calls else self.cost_pico_usd

    def __add__(self, other: UsageTotals) -> UsageTotals:
        """These totals and `other`'s, summed."""
        return UsageTotals(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_pico_usd=self.cost_pico_usd + other.cost_pico_usd,
            unpriced_calls=self.unpriced_calls + other.unpriced_calls,
            estimated_calls=self.estimated_calls + other.estimated_calls,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )

    def plus(self, usage: AttemptUsage) -> UsageTotals:
        """These totals with one more call added."""
        return UsageTotals(
            calls=self.calls + 1,
            input_tokens=self.input_tokens + usage.input_tokens,
            cached_tokens=self.cached_tokens + usage.cached_tokens,
            output_tokens=self.output_tokens + usage.output_tokens,
            cost_pico_usd=self.cost_pico_usd + (usage.cost_pico_usd or 0),
            unpriced_calls=self.unpriced_calls + (usage.cost_pico_usd is None),
            estimated_calls=self.estimated_calls + usage.estimated,
            cache_write_tokens=self.cache_write_tokens + usage.cache_write_tokens,
        )


def total_usage(usages: Iterable[AttemptUsage]) -> UsageTotals:
    """The sum of `usages` (zero for none)."""
    totals = UsageTotals()
    for usage in usages:
        totals = totals.plus(usage)
    return totals


def day_start(now: int) -> int:
    """The start of the UTC day that `now` falls in, ms since the epoch."""
    return now - now % DAY_MS


def next_day_start(now: int) -> int:
    """The start of the UTC day after the one `now` falls in: when a spent budget refills."""
    return day_start(now) + DAY_MS


def day_label(now: int) -> str:
    """The UTC date of `now` as `YYYY-MM-DD`, for grouping usage by day."""
    return datetime.fromtimestamp(day_start(now) // 1000, UTC).date().isoformat()


class OverBudget(enum.StrEnum):
    """What a queued LLM job does when its tenant's daily budget is spent."""

    WAIT = "wait"
    """Stay queued until the next UTC day, using no attempt."""
    FAIL = "fail"
    """Fail at once, saying the budget is spent."""


@dataclass(frozen=True, slots=True)
class DailyBudget:
    """How much a tenant may spend on LLM calls per UTC day, in pico-dollars."""

    limit_pico_usd: int

    def __post_init__(self) -> None:
        if self.limit_pico_usd < 0:
            raise ValueError("a daily budget cannot be negative")

    @classmethod
    def of_usd(cls, amount_usd: Decimal) -> DailyBudget:
        """A budget of `amount_usd` dollars a day."""
        return cls(pico_usd(amount_usd))

    def exhausted(self, spent_today_pico_usd: int) -> bool:
        """True once today's spend has reached the budget: no new call may start."""
        return spent_today_pico_usd >= self.limit_pico_usd

    def left(self, spent_today_pico_usd: int) -> int:
        """Pico-dollars still to spend today (0 when spent or overspent)."""
        return max(0, self.limit_pico_usd - spent_today_pico_usd)
