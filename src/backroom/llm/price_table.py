"""Built-in prices of the common models of the major providers, per million tokens.

Used for a model whose config gives no prices (the config's own prices win; set a
provider's `builtin_prices = false` to use none of these). Taken from the providers'
published price lists (standard tier, not priority); prices change, so a deployment
that must be exact states its own. A dated snapshot (`gpt-4o-2024-08-06`,
`claude-sonnet-4-20250514`) costs what its family costs unless listed itself.

Through a batch API every model costs half its online price (`Prices.for_batch`), as
both providers publish. Anthropic's models carry a cache-write price: 1.25 times the
input price (writes with the default five-minute lifetime); a cache read is the
cached price below. OpenAI bills no cache writes.
"""

from __future__ import annotations

import re
from decimal import Decimal

from backroom.llm.pricing import Prices

# name: (input, cached input, output) US dollars per million tokens.
_TABLE: dict[str, tuple[str, str, str]] = {
    # OpenAI
    "gpt-4o": ("2.50", "1.25", "10.00"),
    "gpt-4o-2024-05-13": ("5.00", "5.00", "15.00"),
    "gpt-4o-mini": ("0.15", "0.075", "0.60"),
    "gpt-4.1": ("2.00", "0.50", "8.00"),
    "gpt-4.1-mini": ("0.40", "0.10", "1.60"),
    "gpt-4.1-nano": ("0.10", "0.025", "0.40"),
    "o1": ("15.00", "7.50", "60.00"),
    "o3": ("2.00", "0.50", "8.00"),
    "o3-mini": ("1.10", "0.55", "4.40"),
    "o4-mini": ("1.10", "0.275", "4.40"),
    "gpt-5": ("1.25", "0.125", "10.00"),
    "gpt-5-mini": ("0.25", "0.025", "2.00"),
    "gpt-5-nano": ("0.05", "0.005", "0.40"),
    # Anthropic (the cached price is a cache read; a write costs `_CACHE_WRITE_FACTOR`)
    "claude-opus-4-5": ("5.00", "0.50", "25.00"),
    "claude-opus-4-1": ("15.00", "1.50", "75.00"),
    "claude-opus-4-0": ("15.00", "1.50", "75.00"),
    "claude-opus-4": ("15.00", "1.50", "75.00"),
    "claude-sonnet-4-5": ("3.00", "0.30", "15.00"),
    "claude-sonnet-4-0": ("3.00", "0.30", "15.00"),
    "claude-sonnet-4": ("3.00", "0.30", "15.00"),
    "claude-3-7-sonnet": ("3.00", "0.30", "15.00"),
    "claude-3-5-sonnet": ("3.00", "0.30", "15.00"),
    "claude-haiku-4-5": ("1.00", "0.10", "5.00"),
    "claude-3-5-haiku": ("0.80", "0.08", "4.00"),
    "claude-3-haiku": ("0.25", "0.03", "1.25"),
}

# A snapshot date or alias a model name may end with: -2024-08-06, -20250514, -latest.
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")
_CACHE_WRITE_FACTOR = Decimal("1.25")
"""What a five-minute cache write costs at Anthropic, times the input price."""


def _prices(name: str, entry: tuple[str, str, str]) -> Prices:
    given, cached, output = (Decimal(price) for price in entry)
    written = given * _CACHE_WRITE_FACTOR if name.startswith("claude-") else None
    return Prices(given, cached, output, written)


def builtin_prices(model: str) -> Prices | None:
    """The built-in prices of `model` (or of its family, for a dated snapshot), or None.

    >>> builtin_prices("gpt-4o-mini-2024-07-18").output_usd_per_million
    Decimal('0.60')
    >>> builtin_prices("my-local-model") is None
    True
    >>> builtin_prices("claude-sonnet-4-5").cache_write_price
    Decimal('3.7500')
    """
    family = model if model in _TABLE else _SNAPSHOT.sub("", model)
    entry = _TABLE.get(family)
    return None if entry is None else _prices(family, entry)
