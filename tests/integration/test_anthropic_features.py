"""The Anthropic provider's request features and prompt-cache usage, through the real
`anthropic` SDK against the mock: tools, JSON schema, images, and cache reads and
writes priced at their own prices."""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal

import pytest

from backroom.core.errors import Permanent
from backroom.llm.config import ProviderConfig
from backroom.llm.features import FunctionTool, ImagePart, JsonSchema, Sampling, TextPart
from backroom.llm.mock.features import IMAGE_TOKENS
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.price_table import builtin_prices
from backroom.llm.pricing import Usage, cost_usd
from backroom.llm.provider import Provider
from backroom.llm.providers.registry import make_provider
from backroom.llm.request import LLMRequest, LLMResult, Message
from backroom.llm.tokens import estimate_tokens

MODEL = "claude-sonnet-4-5"


class Clock:
    def now(self) -> int:
        return 1_800_000_000_000

    async def sleep(self, ms: float) -> None:
        raise AssertionError("nothing here should wait")


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig(), Clock()) as url:
        yield url


@pytest.fixture
async def cached(base_url: str) -> AsyncIterator[Provider]:
    config = ProviderConfig("claude", base_url, kind="anthropic", prompt_cache=True)
    provider = make_provider(config, timeout_s=5)
    yield provider
    await provider.aclose()


@pytest.fixture
async def plain(base_url: str) -> AsyncIterator[Provider]:
    provider = make_provider(ProviderConfig("claude", base_url, kind="anthropic"), timeout_s=5)
    yield provider
    await provider.aclose()


async def _call(provider: Provider, request: LLMRequest) -> LLMResult:
    return await provider.respond(request, clock=Clock())


async def test_the_prompt_cache_is_written_then_read_and_each_priced_apart(
    cached: Provider,
) -> None:
    prompt = f"A long shared context ({secrets.token_hex(4)})"
    first = await _call(cached, LLMRequest(MODEL, prompt))
    second = await _call(cached, LLMRequest(MODEL, prompt))

    tokens = estimate_tokens(prompt)
    assert first.usage == Usage(tokens, 0, first.usage.output_tokens, cache_write_tokens=tokens)
    assert second.usage == Usage(tokens, tokens, second.usage.output_tokens)
    prices = builtin_prices(MODEL)
    assert prices is not None
    output = Decimal(first.usage.output_tokens) * Decimal("15")
    assert cost_usd(first.usage, prices) == (tokens * Decimal("3.75") + output) / 10**6
    assert cost_usd(second.usage, prices) == (tokens * Decimal("0.30") + output) / 10**6
    batch = prices.for_batch()
    assert cost_usd(first.usage, batch) == cost_usd(first.usage, prices) / 2


async def test_without_prompt_cache_nothing_is_written(plain: Provider) -> None:
    result = await _call(plain, LLMRequest(MODEL, f"No cache ({secrets.token_hex(4)})"))
    assert (result.usage.cache_write_tokens, result.usage.cached_tokens) == (0, 0)


async def test_a_tool_call_comes_back_as_a_tool_call(plain: Provider) -> None:
    weather = FunctionTool(
        "get_weather",
        "The weather in a city",
        {"type": "object", "properties": {"city": {"type": "string"}}},
    )
    for stream in (False, True):
        request = LLMRequest(MODEL, "Weather in Oslo?", tools=(weather,), stream=stream)
        result = await _call(plain, request)
        (call,) = result.tool_calls
        assert (call.name, json.loads(call.arguments)) == ("get_weather", {"city": "mock city"})
        assert result.finish.finish_reason == "tool_calls"


async def test_a_json_schema_answer_is_json_that_fits_it(plain: Provider) -> None:
    schema = JsonSchema("answer", {"type": "object", "properties": {"n": {"type": "integer"}}})
    result = await _call(plain, LLMRequest(MODEL, "Give me a number", json_schema=schema))
    assert json.loads(result.output_text) == {"n": 1}


async def test_images_system_turns_and_stop_sequences_reach_the_api(plain: Provider) -> None:
    image = ImagePart("data:image/png;base64,iVBORw0KGgo=")
    system = Message("system", "Answer in one word.")
    with_image = (system, Message("user", (TextPart("What is this?"), image)))
    without = (system, Message("user", "What is this?"))

    seen = await _call(plain, LLMRequest(MODEL, with_image, temperature=0.2))
    unseen = await _call(plain, LLMRequest(MODEL, without))
    bare = await _call(plain, LLMRequest(MODEL, "What is this?"))

    assert seen.usage.input_tokens - unseen.usage.input_tokens == IMAGE_TOKENS
    assert unseen.usage.input_tokens > bare.usage.input_tokens  # the system text counts
    stopped = await _call(plain, LLMRequest(MODEL, "cut here", sampling=Sampling(stop=("here",))))
    assert not stopped.output_text.endswith("here")


async def test_settings_the_messages_api_lacks_are_refused(plain: Provider) -> None:
    with pytest.raises(Permanent, match="seed"):
        await _call(plain, LLMRequest(MODEL, "hi", sampling=Sampling(seed=7)))
