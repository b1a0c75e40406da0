"""The mock's limits over HTTP, on a clock the test moves by hand."""

from __future__ import annotations

from collections.abc import AsyncIterator

import openai
import pytest

from backroom.core.errors import Permanent
from backroom.llm.config import ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.providers.openai.call import make_client, respond
from backroom.llm.providers.openai.errors import RateLimited
from backroom.llm.ratelimit_headers import RateLimitWindow
from backroom.llm.request import LLMRequest, LLMResult

T0 = 1_800_000_000_000


class HandClock:
    """Time moves only when the test (or a sleep) moves it."""

    def __init__(self) -> None:
        self.time = T0

    def now(self) -> int:
        return self.time

    async def sleep(self, ms: float) -> None:
        self.time += int(ms)


@pytest.fixture
def clock() -> HandClock:
    return HandClock()


async def _client(config: MockConfig, clock: HandClock) -> AsyncIterator[openai.AsyncOpenAI]:
    with running_mock(config, clock) as url:
        async with make_client(ProviderConfig("mock", url), timeout_s=10) as client:
            yield client


@pytest.fixture
async def limited(clock: HandClock) -> AsyncIterator[openai.AsyncOpenAI]:
    """Two requests and 100 tokens a minute."""
    async for client in _client(MockConfig(requests_per_minute=2, tokens_per_minute=100), clock):
        yield client


async def _call(client: openai.AsyncOpenAI, clock: HandClock, text: str = "hi") -> LLMResult:
    return await respond(client, LLMRequest("mock-1", text), chat_only=False, clock=clock)


async def test_every_answer_reports_the_limits(
    limited: openai.AsyncOpenAI, clock: HandClock
) -> None:
    first = await _call(limited, clock)  # 1 input and 5 output tokens
    assert first.rate_limits.requests == RateLimitWindow(limit=2, remaining=1, reset_ms=30_000)
    assert first.rate_limits.tokens == RateLimitWindow(limit=100, remaining=94, reset_ms=3_600)
    clock.time += 1_000
    second = await _call(limited, clock)
    assert second.rate_limits.requests == RateLimitWindow(limit=2, remaining=0, reset_ms=59_000)


async def test_past_the_request_limit_a_429_says_when_to_come_back(
    limited: openai.AsyncOpenAI, clock: HandClock
) -> None:
    await _call(limited, clock)
    await _call(limited, clock)
    with pytest.raises(RateLimited) as raised:
        await _call(limited, clock)
    error = raised.value
    assert error.after_ms == 30_000
    assert error.rate_limits.requests == RateLimitWindow(limit=2, remaining=0, reset_ms=60_000)
    assert str(error) == (
        "RateLimitError (HTTP 429): Rate limit reached for mock-1 on requests per min: "
        "Limit 2, Requested 1. Please try again in 30s. (POST /v1/responses)"
    )
    assert isinstance(error.__cause__, openai.RateLimitError)
    headers = error.__cause__.response.headers
    assert (headers["retry-after"], headers["retry-after-ms"]) == ("30", "30000")
    assert headers["x-ratelimit-reset-requests"] == "1m0s"
    clock.time += 30_000
    assert (await _call(limited, clock)).rate_limits.requests.remaining == 0


async def test_past_the_token_limit_a_429_waits_for_enough_tokens(
    limited: openai.AsyncOpenAI, clock: HandClock
) -> None:
    # The reply echoes the input after a 16-character tag, so a call of n characters
    # uses n/4 input and (16 + n)/4 output tokens.
    await _call(limited, clock, "x" * 120)  # 30 + 34 tokens: 36 left
    with pytest.raises(RateLimited) as raised:
        await _call(limited, clock, "y" * 80)  # 20 + 24 tokens
    # 8 tokens short, at 100 a minute (one per 600 ms): 4.8 s.
    assert raised.value.after_ms == 4_800
    assert "on tokens per min: Limit 100, Requested 44" in str(raised.value)


async def test_a_call_that_can_never_fit_fails_for_good(
    limited: openai.AsyncOpenAI, clock: HandClock
) -> None:
    with pytest.raises(Permanent, match=r"Request too large for mock-1 on tokens per min"):
        await _call(limited, clock, "z" * 800)


async def test_latency_and_stream_pacing_pass_on_the_injected_clock(clock: HandClock) -> None:
    config = MockConfig(latency_ms=5_000, stream_interval_ms=40)
    async for client in _client(config, clock):
        await _call(client, clock, "slow")
        assert clock.time == T0 + 5_000
        request = LLMRequest("mock-1", "one two three", stream=True)
        await respond(client, request, chat_only=True, clock=clock)
        # Five deltas ("[mock ", "<digest>] ", "one ", "two ", "three"), 40 ms after each.
        assert clock.time == T0 + 10_000 + 5 * 40
