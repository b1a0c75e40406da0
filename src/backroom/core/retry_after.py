"""When a server asks to be called again: `Retry-After` and `retry-after-ms`.

A proxy may pass an upstream provider's wait on under its own prefix: LiteLLM sends
`llm_provider-retry-after` and `llm_provider-retry-after-ms` (see `retry_after_ms`'s
`prefixes`). Pure: the caller passes the current time, for the HTTP-date form.

>>> retry_after_ms({"retry-after": "1.5"}, now=0)
1500
>>> retry_after_ms({"retry-after-ms": "250", "retry-after": "9"}, now=0)
250
>>> retry_after_ms({"retry-after": "Thu, 01 Jan 1970 00:00:10 GMT"}, now=4_000)
6000
>>> retry_after_ms({"llm_provider-retry-after": "3"}, now=0)
3000
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC
from decimal import ROUND_CEILING, Decimal, InvalidOperation


def _milliseconds(number: str, scale: int) -> int | None:
    """`number` (in units of `scale` ms) as whole milliseconds, rounded up; None if invalid."""
    try:
        value = Decimal(number.strip())
    except InvalidOperation:
        return None
    if not value.is_finite() or value < 0:
        return None
    return int((value * scale).to_integral_value(ROUND_CEILING))


def _http_date_ms(text: str) -> int | None:
    # Imported here: the email package is ~4 ms of every worker's start-up (the webhook
    # sender imports this module), for a header form that servers seldom send.
    import email.utils  # noqa: PLC0415

    try:
        moment = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        # RFC 9110 dates are always GMT; a date without a zone is read the same way.
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


PROXY_PREFIXES = ("", "llm_provider-")
"""Where a wait may be found: the server's own headers first, then LiteLLM's relay of
the upstream provider's (`llm_provider-retry-after`, `llm_provider-retry-after-ms`)."""


def _one_retry_after_ms(headers: Mapping[str, str], prefix: str, now: int) -> int | None:
    precise = headers.get(f"{prefix}retry-after-ms")
    if precise is not None and (wait := _milliseconds(precise, 1)) is not None:
        return wait
    coarse = headers.get(f"{prefix}retry-after")
    if coarse is None:
        return None
    wait = _milliseconds(coarse, 1000)
    if wait is not None:
        return wait
    moment = _http_date_ms(coarse)
    return None if moment is None else max(0, moment - now)


def retry_after_ms(
    headers: Mapping[str, str], *, now: int, prefixes: tuple[str, ...] = PROXY_PREFIXES
) -> int | None:
    """How long the server asks us to wait, in ms; None if it did not say.

    `retry-after-ms` wins over `retry-after`; `retry-after` may be seconds (fractions
    allowed) or an HTTP date, which is measured from `now` (ms since the epoch). A date
    in the past means no wait. Long waits are kept as they are, with no cap. The header
    names are tried under each of `prefixes` in turn; the first that gives a wait wins.
    """
    for prefix in prefixes:
        wait = _one_retry_after_ms(headers, prefix, now)
        if wait is not None:
            return wait
    return None
