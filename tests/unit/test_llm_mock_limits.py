"""The mock's request and token buckets, on explicit times."""

from __future__ import annotations

import json

import pytest

from backroom.llm.mock.limits import ModelLimiter, Refusal, refusal_response
from backroom.llm.mock.server import MockConfig

T0 = 1_800_000_000_000


def test_requests_run_out_and_refill_at_the_per_minute_rate() -> None:
    limiter = ModelLimiter(requests_per_minute=2, tokens_per_minute=None, now=T0)
    assert limiter.admit(tokens=10, now=T0) is None
    assert limiter.admit(tokens=10, now=T0) is None
    assert limiter.admit(tokens=10, now=T0) == Refusal("requests", 2, 1, wait_ms=30_000)
    assert limiter.admit(tokens=10, now=T0 + 29_999) == Refusal("requests", 2, 1, wait_ms=1)
    assert limiter.admit(tokens=10, now=T0 + 30_000) is None


def test_tokens_count_each_calls_whole_size() -> None:
    limiter = ModelLimiter(requests_per_minute=None, tokens_per_minute=600, now=T0)
    assert limiter.admit(tokens=500, now=T0) is None
    # 100 left; 300 more needed, at 10 tokens a second: 30 s.
    assert limiter.admit(tokens=400, now=T0) == Refusal("tokens", 600, 400, wait_ms=30_000)
    assert limiter.admit(tokens=100, now=T0) is None


def test_a_refused_call_takes_nothing_from_either_bucket() -> None:
    limiter = ModelLimiter(requests_per_minute=60, tokens_per_minute=100, now=T0)
    assert limiter.admit(tokens=150, now=T0) == Refusal("tokens", 100, 150, wait_ms=None)
    assert limiter.headers()["x-ratelimit-remaining-requests"] == "60"
    assert limiter.admit(tokens=100, now=T0) is None


def test_the_longest_wait_is_reported_when_both_limits_refuse() -> None:
    limiter = ModelLimiter(requests_per_minute=1, tokens_per_minute=60_000, now=T0)
    assert limiter.admit(tokens=60_000, now=T0) is None
    refusal = limiter.admit(tokens=60_000, now=T0 + 1_000)
    assert refusal == Refusal("requests", 1, 1, wait_ms=59_000)


def test_headers_report_limit_remaining_and_time_to_full() -> None:
    limiter = ModelLimiter(requests_per_minute=600, tokens_per_minute=60_000, now=T0)
    limiter.admit(tokens=30_000, now=T0)
    assert limiter.headers() == {
        "x-ratelimit-limit-requests": "600",
        "x-ratelimit-remaining-requests": "599",
        "x-ratelimit-reset-requests": "100ms",
        "x-ratelimit-limit-tokens": "60000",
        "x-ratelimit-remaining-tokens": "30000",
        "x-ratelimit-reset-tokens": "30s",
    }


def test_no_limits_no_headers_and_every_call_admitted() -> None:
    limiter = ModelLimiter(requests_per_minute=None, tokens_per_minute=None, now=T0)
    assert all(limiter.admit(tokens=10**9, now=T0) is None for _ in range(100))
    assert limiter.headers() == {}


def test_a_refusal_is_a_429_with_retry_after_in_seconds_and_milliseconds() -> None:
    response = refusal_response("m", Refusal("requests", 2, 1, 1500), {"x-extra": "1"})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "2"
    assert response.headers["retry-after-ms"] == "1500"
    assert response.headers["x-extra"] == "1"
    error = json.loads(bytes(response.body))["error"]
    assert error["code"] == "rate_limit_exceeded"
    assert error["type"] == "requests"
    assert error["message"] == (
        "Rate limit reached for m on requests per min: Limit 2, Requested 1. "
        "Please try again in 1.5s."
    )


def test_a_call_too_large_to_ever_fit_is_told_not_to_retry() -> None:
    response = refusal_response("m", Refusal("tokens", 100, 150, None), {})
    assert response.status_code == 429
    assert response.headers["x-should-retry"] == "false"
    assert "retry-after" not in response.headers
    assert json.loads(bytes(response.body))["error"]["message"] == (
        "Request too large for m on tokens per min: Limit 100, Requested 150."
    )


@pytest.mark.parametrize(
    "settings",
    [
        {"latency_ms": -1},
        {"stream_interval_ms": -5},
        {"requests_per_minute": 0},
        {"tokens_per_minute": -10},
    ],
)
def test_the_mock_refuses_nonsense_settings(settings: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="must"):
        MockConfig(**settings)
