"""What a provider's response headers say about its rate limits and when to call again.

Each provider family has a small parser (`RateLimitParser`) that turns its headers
into one provider-neutral `RateLimitSnapshot`: the request and token windows, the
wait it asked for, and whether it said to retry at all. The lanes and the retry
logic read only the snapshot, so a provider with other headers (Anthropic's
`anthropic-ratelimit-*`, say) needs only a parser of its own, added to `PARSERS`.

Anthropic's style (`anthropic_rate_limits`): `anthropic-ratelimit-{requests,tokens}-
{limit,remaining,reset}` (and `input-tokens`/`output-tokens` windows: the tokens
window is the combined one, else the input one), each reset an RFC 3339 time;
`retry-after` in seconds; `x-should-retry`.

OpenAI's style (`openai_rate_limits`), which OpenAI-compatible servers and proxies
copy: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, with Go-style
durations in the resets (`1s`, `6m0s`, `12ms`, `1h2m3.5s`); `retry-after-ms`, or
`retry-after` in seconds or as an HTTP date; `x-should-retry: true|false`. LiteLLM's
proxy relays the upstream provider's headers with an `llm_provider-` prefix: each is
read when the plain header is missing. Header names are looked up in lower case, so
pass a case-insensitive mapping (the SDK's `response.headers`) or a dict with
lower-case keys.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_CEILING, Decimal

from backroom.core.retry_after import PROXY_PREFIXES, retry_after_ms

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
    """What one response said about the provider's limits, in provider-neutral terms.

    `retry_after_ms` is the wait the provider asked for (None: it named none);
    `should_retry` its own verdict on retrying (None: it gave none, the status decides).
    """

    requests: RateLimitWindow = RateLimitWindow()
    tokens: RateLimitWindow = RateLimitWindow()
    retry_after_ms: int | None = None
    should_retry: bool | None = None


RateLimitParser = Callable[[Mapping[str, str], int], RateLimitSnapshot]
"""A provider family's reader: (headers, now in ms since the epoch) to a snapshot."""


def _header(headers: Mapping[str, str], name: str) -> str | None:
    """`name`, or the proxy-relayed copy of it when the server sent none of its own."""
    for prefix in PROXY_PREFIXES:
        value = headers.get(f"{prefix}{name}")
        if value is not None:
            return value
    return None


def _count(headers: Mapping[str, str], name: str) -> int | None:
    value = _header(headers, name)
    if value is None or not value.strip().isdigit():
        return None
    return int(value)


def _duration(headers: Mapping[str, str], name: str) -> int | None:
    value = _header(headers, name)
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


def _should_retry(headers: Mapping[str, str]) -> bool | None:
    value = (_header(headers, "x-should-retry") or "").strip().lower()
    return {"true": True, "false": False}.get(value)


def openai_rate_limits(headers: Mapping[str, str], now: int) -> RateLimitSnapshot:
    """OpenAI's rate-limit headers (and their LiteLLM-relayed copies) as a snapshot.

    A malformed header reads as missing: it never fails the call that carried it.

    >>> snapshot = openai_rate_limits(
    ...     {"llm_provider-retry-after": "2", "x-ratelimit-remaining-tokens": "0"}, 0
    ... )
    >>> snapshot.retry_after_ms, snapshot.tokens.remaining, snapshot.should_retry
    (2000, 0, None)
    """
    return RateLimitSnapshot(
        requests=_window(headers, "requests"),
        tokens=_window(headers, "tokens"),
        retry_after_ms=retry_after_ms(headers, now=now),
        should_retry=_should_retry(headers),
    )


def _reset_in_ms(value: str | None, now: int) -> int | None:
    """How long until an RFC 3339 time, from `now` (0 once passed); None if not one."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return max(0, int(moment.timestamp() * 1000) - now)


def _anthropic_window(headers: Mapping[str, str], kind: str, now: int) -> RateLimitWindow:
    prefix = f"anthropic-ratelimit-{kind}"
    return RateLimitWindow(
        limit=_count(headers, f"{prefix}-limit"),
        remaining=_count(headers, f"{prefix}-remaining"),
        reset_ms=_reset_in_ms(_header(headers, f"{prefix}-reset"), now),
    )


def anthropic_rate_limits(headers: Mapping[str, str], now: int) -> RateLimitSnapshot:
    """Anthropic's rate-limit headers as a snapshot; a malformed one reads as missing.

    >>> snapshot = anthropic_rate_limits({
    ...     "anthropic-ratelimit-requests-remaining": "49",
    ...     "anthropic-ratelimit-input-tokens-limit": "30000",
    ...     "anthropic-ratelimit-input-tokens-reset": "1970-01-01T00:00:12Z",
    ...     "retry-after": "3",
    ... }, 2_000)
    >>> snapshot.requests.remaining, snapshot.tokens.limit, snapshot.tokens.reset_ms
    (49, 30000, 10000)
    >>> snapshot.retry_after_ms
    3000
    """
    tokens = _anthropic_window(headers, "tokens", now)
    if tokens == RateLimitWindow():
        tokens = _anthropic_window(headers, "input-tokens", now)
    return RateLimitSnapshot(
        requests=_anthropic_window(headers, "requests", now),
        tokens=tokens,
        retry_after_ms=retry_after_ms(headers, now=now),
        should_retry=_should_retry(headers),
    )


PARSERS: Mapping[str, RateLimitParser] = {
    "openai": openai_rate_limits,
    "anthropic": anthropic_rate_limits,
}
"""Each provider family's parser, by the name of its API style."""


def parse_rate_limit_headers(
    headers: Mapping[str, str], now: int | None = None
) -> RateLimitSnapshot:
    """The OpenAI-style headers of a response, typed (see `openai_rate_limits`).

    `now` (ms since the epoch) dates a Retry-After given as an HTTP date; without it
    no wait is read, which suits an answer that succeeded.
    """
    if now is None:
        return dataclasses.replace(openai_rate_limits(headers, 0), retry_after_ms=None)
    return openai_rate_limits(headers, now)
