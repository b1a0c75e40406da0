"""What a provider's response headers say about its rate limits and when to call again.

Durations in `x-ratelimit-reset-*` are Go-style: `1s`, `6m0s`, `12ms`, `1h2m3.5s`.
`Retry-After` comes as `retry-after-ms` (milliseconds), or `retry-after` in seconds or
as an HTTP date. Header names are looked up in lower case, so pass a case-insensitive
mapping (the SDK's `response.headers`) or a dict with lower-case keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

_UNIT_MS = {
    "h": Decimal(3_600_000),
    "m": Decimal(60_000),
    "s": Decimal(1000),
    "ms": Decimal(1),
    "us": Decimal("0.001"),
    "µs": Decimal("0.001"),
    "ns": Decimal("0.000001"),
}
# "ms" must be tried before "m", or "12ms" would read as 12 minutes and a stray "s".
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)")


def parse_duration_ms(text: str) -> int:
    """Milliseconds in a Go-style duration, rounded up; ValueError if it is not one.

    >>> [parse_duration_ms(t) for t in ("6m0s", "1s", "12ms", "1h2m3.5s", "0s")]
    [360000, 1000, 12, 3723500, 0]
    """
    position = 0
    total = Decimal(0)
    for match in _DURATION_PART.finditer(text):
        if match.start() != position:
            break
        total += Decimal(match.group(1)) * _UNIT_MS[match.group(2)]
        position = match.end()
    if position == 0 or position != len(text):
        raise ValueError(f"not a duration: {text!r}")
    return int(total.to_integral_value(ROUND_CEILING))


def format_duration(ms: int) -> str:
    """A duration in the providers' style: `12ms` under a second, else like `6m0s`.

    >>> [format_duration(ms) for ms in (12, 1000, 30000, 360000, 3723500)]
    ['12ms', '1s', '30s', '6m0s', '1h2m3.5s']
    """
    if ms < 1000:
        return f"{ms}ms"
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds = f"{(Decimal(rest) / 1000).normalize():f}"
    if hours:
        return f"{hours}h{minutes}m{seconds}s"
    if minutes:
        return f"{minutes}m{seconds}s"
    return f"{seconds}s"


@dataclass(frozen=True, slots=True)
class RateLimitWindow:
    """One limit (requests or tokens per minute) as the provider last reported it.

    Each field is None when the header was missing or malformed.
    """

    limit: int | None = None
    remaining: int | None = None
    reset_ms: int | None = None


@dataclass(frozen=True, slots=True)
class RateLimitSnapshot:
    """The request and token limits from one response's `x-ratelimit-*` headers."""

    requests: RateLimitWindow = RateLimitWindow()
    tokens: RateLimitWindow = RateLimitWindow()


def _count(headers: Mapping[str, str], name: str) -> int | None:
    value = headers.get(name)
    if value is None or not value.strip().isdigit():
        return None
    return int(value)


def _duration(headers: Mapping[str, str], name: str) -> int | None:
    value = headers.get(name)
    if value is None:
        return None
    try:
        return parse_duration_ms(value.strip())
    except ValueError:
        return None


def _window(headers: Mapping[str, str], kind: str) -> RateLimitWindow:
    return RateLimitWindow(
        limit=_count(headers, f"x-ratelimit-limit-{kind}"),
        remaining=_count(headers, f"x-ratelimit-remaining-{kind}"),
        reset_ms=_duration(headers, f"x-ratelimit-reset-{kind}"),
    )


def parse_rate_limit_headers(headers: Mapping[str, str]) -> RateLimitSnapshot:
    """The `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` headers, typed.

    A malformed header reads as missing: it never fails the call that carried it.
    """
    return RateLimitSnapshot(
        requests=_window(headers, "requests"), tokens=_window(headers, "tokens")
    )
