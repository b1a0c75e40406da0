"""Token usage and what it costs.

Money is `decimal.Decimal` US dollars, computed exactly: prices are read from the
config file as decimals (never through float), and a cost is a sum of integer token
counts times those prices, divided by a million. Round only when displaying.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

TOKENS_PER_PRICE_UNIT = 1_000_000


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one call used, as the provider reported them.

    `cached_tokens` is the part of `input_tokens` served from the provider's prompt
    cache (OpenAI counts it inside `input_tokens`, and bills it at a lower price).
    `reported` is False when the provider sent no usage at all (a stream without its
    usage chunk): the zeros are then unknown counts, to be estimated.
    """

    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    reported: bool = True

    def __post_init__(self) -> None:
        if min(self.input_tokens, self.cached_tokens, self.output_tokens) < 0:
            raise ValueError(f"token counts must not be negative: {self}")


@dataclass(frozen=True, slots=True)
class Prices:
    """A model's prices in US dollars per million tokens."""

    input_usd_per_million: Decimal
    cached_input_usd_per_million: Decimal
    output_usd_per_million: Decimal

    def __post_init__(self) -> None:
        prices = (
            self.input_usd_per_million,
            self.cached_input_usd_per_million,
            self.output_usd_per_million,
        )
        if any(price < 0 for price in prices):
            raise ValueError(f"prices must not be negative: {self}")


def cost_usd(usage: Usage, prices: Prices) -> Decimal:
    """What `usage` costs at `prices`, exactly, in US dollars.

    >>> prices = Prices(Decimal("2.50"), Decimal("1.25"), Decimal("10"))
    >>> cost_usd(Usage(input_tokens=1000, cached_tokens=400, output_tokens=200), prices)
    Decimal('0.004')
    """
    # A provider that reports more cached than input tokens is wrong; bill the cached
    # count and no uncached input rather than a negative amount.
    uncached = max(usage.input_tokens - usage.cached_tokens, 0)
    micro_usd = (
        uncached * prices.input_usd_per_million
        + usage.cached_tokens * prices.cached_input_usd_per_million
        + usage.output_tokens * prices.output_usd_per_million
    )
    return micro_usd / TOKENS_PER_PRICE_UNIT
