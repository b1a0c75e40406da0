"""Token usage and what it costs, online or through a provider's batch API.

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
    cache (OpenAI counts it inside `input_tokens`, and bills it at a lower price);
    `cache_write_tokens` the part written to the cache (Anthropic bills it at a higher
    price; its own `input_tokens` count neither, so its provider adds both in).
    `reported` is False when the provider sent no usage at all (a stream without its
    usage chunk): the zeros are then unknown counts, to be estimated.
    """

    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    reported: bool = True
    cache_write_tokens: int = 0

    def __post_init__(self) -> None:
        counts = (self.input_tokens, self.cached_tokens, self.output_tokens)
        if min(*counts, self.cache_write_tokens) < 0:
            raise ValueError(f"token counts must not be negative: {self}")


@dataclass(frozen=True, slots=True)
class Prices:
    """A model's prices in US dollars per million tokens.

    `cached_input` is a prompt-cache read; `cache_write` a prompt-cache write (None:
    the input price, as OpenAI bills it). `batch_input` and `batch_output` are the
    prices through the provider's batch API (None: half the online price); cache reads
    and writes in a batch cost half their online price (see `for_batch`).
    """

    input_usd_per_million: Decimal
    cached_input_usd_per_million: Decimal
    output_usd_per_million: Decimal
    cache_write_usd_per_million: Decimal | None = None
    batch_input_usd_per_million: Decimal | None = None
    batch_output_usd_per_million: Decimal | None = None

    def __post_init__(self) -> None:
        prices = (
            self.input_usd_per_million,
            self.cached_input_usd_per_million,
            self.output_usd_per_million,
            self.cache_write_usd_per_million,
            self.batch_input_usd_per_million,
            self.batch_output_usd_per_million,
        )
        if any(price is not None and price < 0 for price in prices):
            raise ValueError(f"prices must not be negative: {self}")

    @property
    def cache_write_price(self) -> Decimal:
        """What a cache write costs per million tokens (the input price unless set)."""
        written = self.cache_write_usd_per_million
        return self.input_usd_per_million if written is None else written

    def for_batch(self) -> Prices:
        """The prices of the same model through its provider's batch API.

        >>> online = Prices(Decimal("3"), Decimal("0.30"), Decimal("15"), Decimal("3.75"))
        >>> batch = online.for_batch()
        >>> [batch.input_usd_per_million, batch.cached_input_usd_per_million,
        ...  batch.output_usd_per_million, batch.cache_write_price]
        [Decimal('1.5'), Decimal('0.15'), Decimal('7.5'), Decimal('1.875')]
        """
        given_input, given_output = (
            self.batch_input_usd_per_million,
            self.batch_output_usd_per_million,
        )
        return Prices(
            self.input_usd_per_million / 2 if given_input is None else given_input,
            self.cached_input_usd_per_million / 2,
            self.output_usd_per_million / 2 if given_output is None else given_output,
            self.cache_write_price / 2,
        )


def cost_usd(usage: Usage, prices: Prices) -> Decimal:
    """What `usage` costs at `prices`, exactly, in US dollars.

    >>> prices = Prices(Decimal("2.50"), Decimal("1.25"), Decimal("10"))
    >>> cost_usd(Usage(input_tokens=1000, cached_tokens=400, output_tokens=200), prices)
    Decimal('0.004')
    >>> written = Usage(input_tokens=1000, output_tokens=200, cache_write_tokens=1000)
    >>> cost_usd(written, Prices(Decimal("3"), Decimal("0.3"), Decimal("15"), Decimal("3.75")))
    Decimal('0.00675')
    """
    # A provider that reports more cached than input tokens is wrong; bill the cached
    # count and no uncached input rather than a negative amount.
    uncached = max(usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens, 0)
    micro_usd = (
        uncached * prices.input_usd_per_million
        + usage.cached_tokens * prices.cached_input_usd_per_million
        + usage.cache_write_tokens * prices.cache_write_price
        + usage.output_tokens * prices.output_usd_per_million
    )
    return micro_usd / TOKENS_PER_PRICE_UNIT
