"""Cost arithmetic against a price table, in exact decimals."""

from __future__ import annotations

from decimal import Decimal

import pytest

from backroom.llm.pricing import Prices, Usage, cost_usd

# USD per million tokens: input, cached input, output.
PRICE_TABLE = {
    "gpt-4o": Prices(Decimal("2.50"), Decimal("1.25"), Decimal("10.00")),
    "gpt-4o-mini": Prices(Decimal("0.15"), Decimal("0.075"), Decimal("0.60")),
    "free": Prices(Decimal(0), Decimal(0), Decimal(0)),
}


@pytest.mark.parametrize(
    ("model", "usage", "cost"),
    [
        ("gpt-4o", Usage(1_000_000, 0, 0), "2.50"),
        ("gpt-4o", Usage(0, 0, 1_000_000), "10.00"),
        ("gpt-4o", Usage(1_000_000, 1_000_000, 0), "1.25"),
        ("gpt-4o", Usage(1000, 400, 200), "0.004"),
        ("gpt-4o-mini", Usage(1, 0, 0), "0.00000015"),
        ("gpt-4o-mini", Usage(1, 1, 1), "0.000000675"),
        # 10,297 uncached x 0.15 + 2,048 cached x 0.075 + 678 x 0.60 = 2,104.95 micro-dollars
        ("gpt-4o-mini", Usage(12_345, 2_048, 678), "0.00210495"),
        ("free", Usage(5000, 100, 5000), "0"),
    ],
)
def test_cost_of_usage_at_table_prices(model: str, usage: Usage, cost: str) -> None:
    assert cost_usd(usage, PRICE_TABLE[model]) == Decimal(cost)


def test_many_tiny_costs_add_up_exactly() -> None:
    one_token = cost_usd(Usage(1, 0, 0), PRICE_TABLE["gpt-4o-mini"])
    assert sum([one_token] * 1_000_000, Decimal(0)) == Decimal("0.15")


def test_more_cached_than_input_tokens_bills_no_uncached_input() -> None:
    usage = Usage(input_tokens=10, cached_tokens=50, output_tokens=0)
    assert cost_usd(usage, PRICE_TABLE["gpt-4o"]) == Decimal("0.0000625")


def test_negative_counts_and_prices_are_refused() -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        Usage(input_tokens=-1)
    with pytest.raises(ValueError, match="must not be negative"):
        Prices(Decimal(1), Decimal(-1), Decimal(1))
