"""Usage per attempt and in total, money in pico-dollars, and the UTC budget day."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backroom.core.usage import (
    DAY_MS,
    AttemptUsage,
    DailyBudget,
    UsageTotals,
    day_label,
    day_start,
    next_day_start,
    pico_usd,
    total_usage,
    usd,
)
from backroom.llm.pricing import Prices, Usage, cost_usd


def ms(text: str) -> int:
    """Epoch milliseconds of an ISO time in UTC."""
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


@pytest.mark.parametrize(
    ("dollars", "pico"),
    [
        ("0", 0),
        ("1", 10**12),
        ("2.50", 2_500_000_000_000),
        ("0.00000015", 150_000),  # one gpt-4o-mini input token
        ("0.000000675", 675_000),
        ("0.000000000001", 1),
        ("0.0000000000001", 1),  # below a pico-dollar: rounded up, never down
        ("0.0000000000011", 2),
    ],
)
def test_dollars_to_pico_dollars(dollars: str, pico: int) -> None:
    assert pico_usd(Decimal(dollars)) == pico


@pytest.mark.parametrize("amount", ["NaN", "Infinity"])
def test_only_finite_amounts_are_money(amount: str) -> None:
    with pytest.raises(ValueError, match="not an amount"):
        pico_usd(Decimal(amount))


@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_pico_dollars_convert_to_dollars_and_back_exactly(pico: int) -> None:
    assert pico_usd(usd(pico)) == pico


# A price per million tokens with at most six decimal places.
prices_per_million = st.decimals(min_value=0, max_value=1_000, places=6)


@given(
    tokens=st.tuples(*[st.integers(0, 10**9)] * 3),
    prices=st.tuples(*[prices_per_million] * 3),
)
def test_a_cost_at_real_prices_is_a_whole_number_of_pico_dollars(
    tokens: tuple[int, int, int], prices: tuple[Decimal, Decimal, Decimal]
) -> None:
    cost = cost_usd(Usage(*tokens), Prices(*prices))
    assert usd(pico_usd(cost)) == cost


def usage(job_id: int = 1, attempt: int = 1, cost: int | None = 1_000, at: int = 0) -> AttemptUsage:
    return AttemptUsage(
        job_id=job_id,
        lease_token=attempt,
        attempt=attempt,
        tenant="acme",
        model="gpt-4o-mini",
        prompt_version="v3",
        input_tokens=100,
        cached_tokens=40,
        output_tokens=10,
        cost_pico_usd=cost,
        at=at,
    )


def test_totals_sum_every_count_and_cost() -> None:
    totals = total_usage([usage(attempt=1), usage(attempt=2, cost=None), usage(attempt=3)])
    assert totals == UsageTotals(
        calls=3,
        input_tokens=300,
        cached_tokens=120,
        output_tokens=30,
        cost_pico_usd=2_000,
        unpriced_calls=1,
    )
    assert totals.cost_usd == Decimal("0.000000002")
    # A call without a price makes the whole cost unknown, not a smaller number.
    assert totals.known_cost_pico_usd is None
    assert total_usage([usage(attempt=1), usage(attempt=3)]).known_cost_pico_usd == 2_000


def test_the_cost_of_unpriced_calls_only_is_unknown_not_zero() -> None:
    unpriced = total_usage([usage(attempt=1, cost=None), usage(attempt=2, cost=None)])
    estimated = total_usage([replace(usage(attempt=1), estimated=True)])

    assert unpriced.known_cost_pico_usd is None
    assert unpriced.unpriced_calls == 2
    assert estimated.estimated_calls == 1


def test_no_calls_total_zero() -> None:
    assert total_usage([]) == UsageTotals()
    assert UsageTotals().cost_usd == 0


@pytest.mark.parametrize(
    "changes",
    [{"input_tokens": -1}, {"cached_tokens": -1}, {"output_tokens": -1}, {"cost_pico_usd": -1}],
)
def test_negative_usage_is_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        dataclasses.replace(usage(), **changes)


@pytest.mark.parametrize(
    ("now", "start", "label"),
    [
        ("2025-03-14T00:00:00", "2025-03-14T00:00:00", "2025-03-14"),
        ("2025-03-14T23:59:59.999", "2025-03-14T00:00:00", "2025-03-14"),
        ("2025-03-15T00:00:00.001", "2025-03-15T00:00:00", "2025-03-15"),
        ("2024-02-29T12:00:00", "2024-02-29T00:00:00", "2024-02-29"),
        ("1970-01-01T00:00:00", "1970-01-01T00:00:00", "1970-01-01"),
    ],
)
def test_the_budget_day_is_the_utc_day(now: str, start: str, label: str) -> None:
    assert day_start(ms(now)) == ms(start)
    assert next_day_start(ms(now)) == ms(start) + DAY_MS
    assert day_label(ms(now)) == label


def test_the_day_after_the_last_of_december_is_the_new_year() -> None:
    assert next_day_start(ms("2025-12-31T18:30:00")) == ms("2026-01-01T00:00:00")


@pytest.mark.parametrize(
    ("spent", "exhausted", "left"),
    [
        (0, False, 5 * 10**12),
        (4_999_999_999_999, False, 1),
        (5 * 10**12, True, 0),
        (6 * 10**12, True, 0),
    ],
    ids=["nothing", "one-pico-left", "exactly-spent", "overspent"],
)
def test_a_daily_budget_is_exhausted_once_reached(spent: int, exhausted: bool, left: int) -> None:
    budget = DailyBudget.of_usd(Decimal("5.00"))
    assert budget.exhausted(spent) is exhausted
    assert budget.left(spent) == left


def test_a_zero_budget_allows_nothing_and_a_negative_one_is_refused() -> None:
    assert DailyBudget(0).exhausted(0)
    with pytest.raises(ValueError, match="cannot be negative"):
        DailyBudget(-1)
