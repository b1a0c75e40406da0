"""The mock's request and token buckets, on explicit times."""

from __future__ import annotations

import json
from typing import Any

import pytest

from backroom.llm.mock.charge import ChargeAt, TokenCharge
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
def test_the_mock_refuses_nonsense_settings(settings: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must"):
        MockConfig(**settings)


CALL = TokenCharge(input_tokens=40, output_tokens=10, max_output_tokens=200)


def test_charged_at_admission_a_call_takes_its_max_output_and_keeps_it() -> None:
    limiter = ModelLimiter(None, 600, T0, ChargeAt.ADMISSION)
    assert CALL.at_admission(ChargeAt.ADMISSION) == 240
    assert limiter.admit(CALL.at_admission(limiter.charge_at), T0) is None
    limiter.complete(CALL, T0 + 100)  # nothing comes back when it answers
    assert limiter.headers()["x-ratelimit-remaining-tokens"] == "360"


def test_charged_at_completion_a_call_needs_its_input_and_pays_its_use_at_the_end() -> None:
    limiter = ModelLimiter(None, 600, T0, ChargeAt.COMPLETION)
    assert limiter.admit(CALL.at_admission(limiter.charge_at), T0) is None
    assert limiter.headers()["x-ratelimit-remaining-tokens"] == "600"
    limiter.complete(CALL, T0)
    assert limiter.headers()["x-ratelimit-remaining-tokens"] == "550"


def test_charged_at_completion_a_bucket_may_owe_and_reports_nothing_left() -> None:
    limiter = ModelLimiter(None, 60, T0, ChargeAt.COMPLETION)
    assert limiter.admit(40, T0) is None
    limiter.complete(CALL, T0)  # 50 of 60: 10 left
    assert limiter.admit(40, T0) is not None  # the next input does not fit
    assert limiter.admit(10, T0) is None
    limiter.complete(CALL, T0)  # owes 40
    assert limiter.headers()["x-ratelimit-remaining-tokens"] == "0"
    # 40 owed and 10 needed come back at one token a second.
    refusal = limiter.admit(10, T0)
    assert refusal is not None and refusal.wait_ms == 50_000


def test_by_default_the_real_usage_is_charged_at_admission() -> None:
    assert CALL.at_admission(ChargeAt.USAGE) == 50
    no_max = TokenCharge(40, 10, None)
    assert no_max.at_admission(ChargeAt.ADMISSION) == 50
