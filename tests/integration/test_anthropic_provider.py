"""The Anthropic provider through the real `anthropic` SDK against the mock over
loopback: plain and streamed calls, every error class, its rate-limit headers.

One mock serves the module; each test uses its own prompt text, so the mock's
per-request state (fault counts, prompt cache) never leaks between tests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anthropic
import pytest

from backroom.core.errors import Permanent, Retryable
from backroom.llm.config import ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.provider import RateLimited
from backroom.llm.providers.registry import make_provider
from backroom.llm.request import LLMRequest, LLMResult

T0 = 1_800_000_000_000  # a whole second, so the RFC 3339 resets convert exactly
RPM, TPM = 1_000, 1_000_000


class FrozenClock:
    """A clock standing still at `T0`: the mock and the provider share it."""

    def now(self) -> int:
        return T0

    async def sleep(self, ms: float) -> None:
        raise AssertionError("nothing here should wait")


CLOCK = FrozenClock()


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig(requests_per_minute=RPM, tokens_per_minute=TPM), CLOCK) as url:
        yield url


@pytest.fixture
async def provider(base_url: str) -> AsyncIterator[object]:
    config = ProviderConfig("claude", base_url, kind="anthropic")
    made = make_provider(config, timeout_s=5)
    yield made
    await made.aclose()


async def _call(provider: object, text: str, **options: object) -> LLMResult:
    assert hasattr(provider, "respond")
    request = LLMRequest("claude-haiku-4-5", text, **options)  # type: ignore[arg-type]
    result: LLMResult = await provider.respond(request, clock=CLOCK)
    return result


async def _error(provider: object, text: str) -> Retryable | Permanent:
    with pytest.raises((Retryable, Permanent)) as raised:
        await _call(provider, text)
    assert isinstance(raised.value.__cause__, anthropic.AnthropicError)
    error = raised.value
    assert isinstance(error, Retryable | Permanent)
    return error


async def test_a_plain_call_answers_with_text_usage_and_rate_limits(provider: object) -> None:
    result = await _call(provider, "What is a lane?", instructions="Be brief.")

    assert result.output_text.endswith("] What is a lane?")
    assert result.response_id.startswith("msg_mock")
    assert (result.finish.status, result.finish.finish_reason) == ("completed", "stop")
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert (result.usage.cached_tokens, result.usage.cache_write_tokens) == (0, 0)
    limits = result.rate_limits
    assert (limits.requests.limit, limits.tokens.limit) == (RPM, TPM)
    assert limits.requests.remaining == RPM - 1
    assert limits.requests.reset_ms is not None and limits.retry_after_ms is None


async def test_a_streamed_call_passes_on_growing_text(provider: object) -> None:
    seen: list[str] = []

    async def on_delta(text: str) -> None:
        seen.append(text)

    class Ticking(FrozenClock):
        def __init__(self) -> None:
            self.time = T0

        def now(self) -> int:
            self.time += 300
            return self.time

    assert hasattr(provider, "respond")
    request = LLMRequest("claude-haiku-4-5", "Stream some words to me, please", stream=True)
    result = await provider.respond(request, clock=Ticking(), on_delta=on_delta)

    assert result.output_text.endswith("] Stream some words to me, please")
    assert seen and all(result.output_text.startswith(text) for text in seen)
    assert [len(text) for text in seen] == sorted(len(text) for text in seen)
    assert result.usage.output_tokens > 0 and result.usage.input_tokens > 0
    plain = await _call(provider, "Stream some words to me, please")
    assert plain.output_text == result.output_text


async def test_the_output_limit_cuts_an_answer_short(provider: object) -> None:
    result = await _call(provider, "A long answer " * 20, max_output_tokens=3)
    assert result.finish.truncated and result.finish.incomplete_reason == "max_output_tokens"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413])
async def test_refusals_of_the_request_are_permanent(provider: object, status: int) -> None:
    error = await _error(provider, f"Refuse me [fault:{status}]")
    assert isinstance(error, Permanent)
    message = str(error)
    assert f"HTTP {status}" in message and "Scripted fault" in message
    assert "POST /v1/messages" in message


async def test_a_429_slows_the_lane_and_names_its_wait(provider: object) -> None:
    error = await _error(provider, "Too fast [fault:429:retry-after=7]")
    assert isinstance(error, RateLimited)
    assert error.after_ms == 7_000 and error.rate_limits.retry_after_ms == 7_000
    assert "rate_limit_error" in str(error)
    assert error.rate_limits.requests.limit == RPM


async def test_529_overloaded_is_retryable_after_its_wait(provider: object) -> None:
    error = await _error(provider, "Busy [fault:529:retry-after=2]")
    assert isinstance(error, Retryable) and not isinstance(error, RateLimited)
    assert error.after_ms == 2_000 and "overloaded_error" in str(error)


@pytest.mark.parametrize("status", [500, 502, 503, 504])
async def test_server_errors_are_retryable(provider: object, status: int) -> None:
    error = await _error(provider, f"Broken [fault:{status}]")
    assert isinstance(error, Retryable)


async def test_should_retry_false_wins_over_the_status(provider: object) -> None:
    error = await _error(provider, "Never again [fault:503:should-retry=false]")
    assert isinstance(error, Permanent)


@pytest.mark.parametrize("fault", ["stream_error", "malformed_chunk", "cut_off", "no_terminal"])
async def test_a_stream_that_breaks_is_retryable(provider: object, fault: str) -> None:
    with pytest.raises(Retryable) as raised:
        await _call(provider, f"Break my stream [fault:{fault}]", stream=True)
    if fault == "stream_error":
        assert "overloaded_error" in str(raised.value)


async def test_a_call_that_never_answers_times_out_retryably(base_url: str) -> None:
    config = ProviderConfig("claude", base_url, kind="anthropic")
    impatient = make_provider(config, timeout_s=0.5)
    try:
        with pytest.raises(Retryable, match="APITimeoutError"):
            await _call(impatient, "Hang [fault:timeout]")
    finally:
        await impatient.aclose()


async def test_a_call_past_the_mock_limit_gets_a_rate_limited_refusal(base_url: str) -> None:
    with running_mock(MockConfig(requests_per_minute=1), CLOCK) as url:
        tight = make_provider(ProviderConfig("tight", url, kind="anthropic"), timeout_s=5)
        try:
            await _call(tight, "The first call fits")
            with pytest.raises(RateLimited) as raised:
                await _call(tight, "The second does not")
        finally:
            await tight.aclose()
    snapshot = raised.value.rate_limits
    assert snapshot.requests.limit == 1 and snapshot.requests.remaining == 0
    assert snapshot.retry_after_ms == 60_000 and raised.value.after_ms == 60_000
