"""The request features through the official SDK over loopback HTTP against the mock.

Every test runs through both APIs; the request body as it left the SDK is kept (an
httpx event hook), so a test checks both what was sent and what came back.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import openai
import pytest

from backroom.llm.config import ProviderConfig
from backroom.llm.features import (
    Finish,
    FunctionTool,
    ImagePart,
    JsonSchema,
    Sampling,
    TextPart,
    ToolCall,
)
from backroom.llm.mock.features import IMAGE_TOKENS
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.providers.openai.call import make_client, respond
from backroom.llm.request import LLMRequest, LLMResult, Message
from backroom.llm.tokens import estimate_tokens

APIS = pytest.mark.parametrize("chat_only", [False, True], ids=["responses", "chat"])
STREAMS = pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "role": {"type": "string", "enum": ["admin", "user"]},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age", "role", "tags"],
    "additionalProperties": False,
}
WEATHER = FunctionTool(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    strict=True,
)


class StillClock:
    def now(self) -> int:
        return 1_800_000_000_000

    async def sleep(self, ms: float) -> None:
        raise AssertionError("nothing here should wait")


class Wire:
    """The JSON bodies of the requests a client sent, in order."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def record(self, request: httpx2.Request) -> None:
        self.bodies.append(json.loads(request.content))

    @property
    def last(self) -> dict[str, Any]:
        return self.bodies[-1]


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig()) as url:
        yield url


@pytest.fixture
def wire() -> Wire:
    return Wire()


@pytest.fixture
async def client(base_url: str, wire: Wire) -> AsyncIterator[openai.AsyncOpenAI]:
    http = httpx2.AsyncClient(event_hooks={"request": [wire.record]})
    client = make_client(ProviderConfig("mock", base_url), timeout_s=10, http_client=http)
    yield client
    await client.close()


async def _respond(
    client: openai.AsyncOpenAI, request: LLMRequest, *, chat_only: bool
) -> LLMResult:
    return await respond(client, request, chat_only=chat_only, clock=StillClock())


@APIS
@STREAMS
async def test_a_json_schema_gets_a_json_answer_of_that_shape(
    client: openai.AsyncOpenAI, wire: Wire, chat_only: bool, stream: bool
) -> None:
    schema = JsonSchema("person", PERSON, strict=True, description="Someone")
    request = LLMRequest("mock-1", "Who?", json_schema=schema, stream=stream)
    result = await _respond(client, request, chat_only=chat_only)
    assert json.loads(result.output_text) == {
        "name": "mock name",
        "age": 1,
        "role": "admin",
        "tags": ["mock tags"],
    }
    assert result.finish == Finish("completed", "stop")
    spec = {"name": "person", "schema": PERSON, "strict": True, "description": "Someone"}
    if chat_only:
        assert wire.last["response_format"] == {"type": "json_schema", "json_schema": spec}
    else:
        assert wire.last["text"] == {"format": {"type": "json_schema", **spec}}


@APIS
@STREAMS
async def test_tools_are_sent_and_the_models_call_comes_back(
    client: openai.AsyncOpenAI, wire: Wire, chat_only: bool, stream: bool
) -> None:
    request = LLMRequest("mock-1", "Weather in Oslo?", tools=(WEATHER,), stream=stream)
    result = await _respond(client, request, chat_only=chat_only)
    (call,) = result.tool_calls
    assert call == ToolCall("call_mock" + call.call_id[-8:], "get_weather", call.arguments)
    assert json.loads(call.arguments) == {"city": "mock city"}
    assert result.output_text == ""
    assert result.finish == Finish("completed", "tool_calls")
    assert result.usage.output_tokens == estimate_tokens(call.arguments)
    (sent,) = wire.last["tools"]
    function = {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": WEATHER.parameters,
        "strict": True,
    }
    assert sent == (
        {"type": "function", "function": function}
        if chat_only
        else {"type": "function", **function}
    )


@APIS
async def test_tool_choice_none_gets_text(
    client: openai.AsyncOpenAI, wire: Wire, chat_only: bool
) -> None:
    request = LLMRequest("mock-1", "Just talk", tools=(WEATHER,), tool_choice="none")
    result = await _respond(client, request, chat_only=chat_only)
    assert result.tool_calls == ()
    assert result.output_text.endswith("] Just talk")
    assert wire.last["tool_choice"] == "none"


@APIS
@STREAMS
async def test_reasoning_effort_is_sent_and_its_tokens_reported(
    client: openai.AsyncOpenAI, wire: Wire, chat_only: bool, stream: bool
) -> None:
    request = LLMRequest("mock-1", "Think hard", reasoning_effort="medium", stream=stream)
    result = await _respond(client, request, chat_only=chat_only)
    assert result.reasoning_tokens == 64
    assert result.usage.output_tokens == estimate_tokens(result.output_text) + 64
    if chat_only:
        assert wire.last["reasoning_effort"] == "medium"
    else:
        assert wire.last["reasoning"] == {"effort": "medium"}


@APIS
async def test_sampling_settings_are_sent_as_they_are(
    client: openai.AsyncOpenAI, wire: Wire, chat_only: bool
) -> None:
    sampling = Sampling(top_p=0.5, stop=("STOP", "END"), seed=42, metadata={"run": "r-1"})
    request = LLMRequest("mock-1", "one two STOP three", sampling=sampling)
    result = await _respond(client, request, chat_only=chat_only)
    sent = wire.last
    assert (sent["top_p"], sent["stop"], sent["seed"], sent["metadata"]) == (
        0.5,
        ["STOP", "END"],
        42,
        {"run": "r-1"},
    )
    # The mock stops where a model would: before the first stop sequence.
    assert result.output_text.endswith("] one two ")
    assert result.finish == Finish("completed", "stop")


async def test_the_responses_api_echoes_top_p_and_metadata(
    client: openai.AsyncOpenAI,
) -> None:
    response = await client.responses.create(
        model="mock-1", input="echo", top_p=0.25, metadata={"k": "v"}
    )
    assert (response.top_p, response.metadata) == (0.25, {"k": "v"})


@APIS
async def test_images_are_sent_as_input_parts(
    client: openai.AsyncOpenAI, wire: Wire, chat_only: bool
) -> None:
    png = "data:image/png;base64,iVBORw0KGgo="
    turn = Message(
        "user",
        (
            TextPart("What is in these?"),
            ImagePart("https://example.test/a.jpg", "low"),
            ImagePart(png),
        ),
    )
    result = await _respond(client, LLMRequest("mock-1", (turn,)), chat_only=chat_only)
    assert result.output_text.endswith("] What is in these?")
    assert result.usage.input_tokens == estimate_tokens("What is in these?") + 2 * IMAGE_TOKENS
    (message,) = wire.last["messages" if chat_only else "input"]
    if chat_only:
        assert message["content"] == [
            {"type": "text", "text": "What is in these?"},
            {
                "type": "image_url",
                "image_url": {"url": "https://example.test/a.jpg", "detail": "low"},
            },
            {"type": "image_url", "image_url": {"url": png, "detail": "auto"}},
        ]
    else:
        assert message["content"] == [
            {"type": "input_text", "text": "What is in these?"},
            {"type": "input_image", "image_url": "https://example.test/a.jpg", "detail": "low"},
            {"type": "input_image", "image_url": png, "detail": "auto"},
        ]


@APIS
@STREAMS
async def test_a_truncated_answer_says_so_in_both_apis_terms(
    client: openai.AsyncOpenAI, chat_only: bool, stream: bool
) -> None:
    request = LLMRequest("mock-1", "tell me everything " * 10, max_output_tokens=4, stream=stream)
    result = await _respond(client, request, chat_only=chat_only)
    assert result.finish == Finish("incomplete", "length", "max_output_tokens")
    assert result.finish.truncated


@APIS
async def test_a_plain_answer_is_complete(client: openai.AsyncOpenAI, chat_only: bool) -> None:
    result = await _respond(client, LLMRequest("mock-1", "short"), chat_only=chat_only)
    assert result.finish == Finish("completed", "stop")
    assert not result.finish.truncated
    assert result.reasoning_tokens == 0
