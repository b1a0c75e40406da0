"""What a batch line costs: the model's batch prices (`Prices.for_batch`: half the online
price unless the config names its own).

`batch_prices` is the one place the poller asks.
"""

from __future__ import annotations

from backroom.llm.pricing import Prices


def batch_prices(online: Prices | None) -> Prices | None:
    """The prices of a batch line, from the model's prices (None: unpriced).

    >>> from backroom.llm.price_table import builtin_prices
    >>> batch_prices(builtin_prices("gpt-4o-mini")).output_usd_per_million
    Decimal('0.30')
    """
    return None if online is None else online.for_batch()
