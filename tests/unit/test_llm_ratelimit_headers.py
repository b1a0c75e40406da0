"""Reading rate-limit and Retry-After headers: durations, snapshots, waits."""

from __future__ import annotations

import email.utils

import httpx
import pytest

from backroom.core.retry_after import retry_after_ms
from backroom.llm.ratelimit_headers import (
    PARSERS,
    RateLimitSnapshot,
    RateLimitWindow,
    format_duration,
    openai_rate_limits,
    parse_duration_ms,
    parse_rate_limit_headers,
)

NOW = 1_800_000_000_000  # ms since the epoch, a whole second


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("0s", 0),
        ("1s", 1000),
        ("12ms", 12),
        ("6m0s", 360_000),
        ("1h2m3.5s", 3_723_500),
        ("20.5s", 20_500),
        ("2h", 7_200_000),
        ("1m30s", 90_000),
        ("1.1s", 1100),
        ("500us", 1),  # rounded up: a wait is never shortened
        ("999ns", 1),
        ("1s250ms", 1250),
    ],
)
def test_durations_in_the_providers_style(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("text", ["", "s", "12", "1x", "1s ", " 1s", "-1s", "1s2", "m1s", "1.s"])
def test_malformed_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration_ms(text)


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "0ms"),
        (12, "12ms"),
        (999, "999ms"),
        (1000, "1s"),
        (1500, "1.5s"),
        (30_000, "30s"),
        (360_000, "6m0s"),
        (3_723_500, "1h2m3.5s"),
        (3_600_000, "1h0m0s"),
    ],
)
def test_durations_are_written_as_providers_write_them(ms: int, text: str) -> None:
    assert format_duration(ms) == text
    assert parse_duration_ms(text) == ms


def test_a_full_set_of_rate_limit_headers() -> None:
    headers = {
        "x-ratelimit-limit-requests": "600",
        "x-ratelimit-remaining-requests": "599",
        "x-ratelimit-reset-requests": "100ms",
        "x-ratelimit-limit-tokens": "60000",
        "x-ratelimit-remaining-tokens": "12345",
        "x-ratelimit-reset-tokens": "6m0s",
    }
    assert parse_rate_limit_headers(headers) == RateLimitSnapshot(
        requests=RateLimitWindow(limit=600, remaining=599, reset_ms=100),
        tokens=RateLimitWindow(limit=60000, remaining=12345, reset_ms=360_000),
    )


def test_missing_and_malformed_rate_limit_headers_read_as_unknown() -> None:
    headers = {
        "x-ratelimit-remaining-requests": "many",
        "x-ratelimit-reset-requests": "soon",
        "x-ratelimit-remaining-tokens": "-3",
        "x-ratelimit-reset-tokens": "1s",
    }
    assert parse_rate_limit_headers(headers) == RateLimitSnapshot(
        requests=RateLimitWindow(),
        tokens=RateLimitWindow(reset_ms=1000),
    )


def test_header_names_are_matched_case_insensitively_through_the_response_headers() -> None:
    headers = httpx.Headers({"X-RateLimit-Remaining-Tokens": "7", "Retry-After-Ms": "25"})
    assert parse_rate_limit_headers(headers).tokens.remaining == 7
    assert retry_after_ms(headers, now=NOW) == 25


def _http_date(ms: int) -> str:
    return email.utils.formatdate(ms / 1000, usegmt=True)


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"retry-after-ms": "250"}, 250),
        ({"retry-after-ms": "12.2"}, 13),
        ({"retry-after": "2"}, 2000),
        ({"retry-after": "0.5"}, 500),
        ({"retry-after": "130"}, 130_000),  # beyond the SDK's 120 s cap: kept
        ({"retry-after": "86400"}, 86_400_000),
        ({"retry-after": _http_date(NOW + 30_000)}, 30_000),
        ({"retry-after": _http_date(NOW + 600_000)}, 600_000),
        ({"retry-after": _http_date(NOW - 5_000)}, 0),  # already past: no wait
        ({"retry-after": "Fri, 15 Jan 2027 09:00:00"}, 3_600_000),  # no zone: read as GMT
        ({"retry-after-ms": "250", "retry-after": "9"}, 250),  # the precise one wins
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9000),  # a bad one is skipped
        ({"retry-after-ms": "-1"}, None),
        ({"retry-after": "inf"}, None),
        ({"retry-after": "NaN"}, None),
        ({"retry-after": "tomorrow"}, None),
        ({}, None),
        # LiteLLM's relay of the upstream provider's wait, used when there is no other.
        ({"llm_provider-retry-after": "3"}, 3000),
        ({"llm_provider-retry-after-ms": "5600"}, 5600),
        ({"llm_provider-retry-after": _http_date(NOW + 7_000)}, 7000),
        ({"llm_provider-retry-after-ms": "40", "llm_provider-retry-after": "9"}, 40),
        ({"retry-after": "1", "llm_provider-retry-after-ms": "5600"}, 1000),
        ({"retry-after": "never", "llm_provider-retry-after": "2"}, 2000),
    ],
)
def test_retry_after_in_every_form(headers: dict[str, str], wait: int | None) -> None:
    assert retry_after_ms(headers, now=NOW) == wait


def test_one_neutral_snapshot_from_openai_style_headers() -> None:
    headers = httpx.Headers(
        {
            "X-RateLimit-Remaining-Requests": "0",
            "x-ratelimit-reset-requests": "1m0s",
            "x-ratelimit-remaining-tokens": "900",
            "Retry-After-Ms": "5600",
            "X-Should-Retry": "True",
        }
    )
    assert PARSERS["openai"](headers, NOW) == RateLimitSnapshot(
        requests=RateLimitWindow(remaining=0, reset_ms=60_000),
        tokens=RateLimitWindow(remaining=900),
        retry_after_ms=5600,
        should_retry=True,
    )


def test_a_proxy_relays_the_upstream_limits_under_its_prefix() -> None:
    headers = {
        "llm_provider-x-ratelimit-remaining-tokens": "12",
        "llm_provider-x-ratelimit-reset-tokens": "6s",
        "x-ratelimit-remaining-requests": "4",  # the proxy's own limit wins over a relay
        "llm_provider-x-ratelimit-remaining-requests": "99",
        "llm_provider-x-should-retry": "false",
    }
    snapshot = openai_rate_limits(headers, NOW)

    assert snapshot.tokens == RateLimitWindow(remaining=12, reset_ms=6000)
    assert snapshot.requests.remaining == 4
    assert snapshot.should_retry is False


@pytest.mark.parametrize("value", ["maybe", "", "1", "yes"])
def test_an_unclear_should_retry_says_nothing(value: str) -> None:
    assert openai_rate_limits({"x-should-retry": value}, NOW).should_retry is None


def test_a_success_read_without_a_clock_carries_no_wait() -> None:
    headers = {"retry-after": _http_date(NOW + 30_000), "x-ratelimit-remaining-tokens": "5"}

    snapshot = parse_rate_limit_headers(headers)

    assert snapshot.retry_after_ms is None
    assert snapshot.tokens.remaining == 5
