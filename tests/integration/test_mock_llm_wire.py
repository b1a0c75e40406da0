"""The mock speaks the wire formats the official SDK parses: bodies, SSE events, errors."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import openai
import pytest

from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig()) as url:
        yield url


@pytest.fixture
async def client(base_url: str) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(api_key="unused", base_url=base_url, max_retries=0) as client:
        yield client


async def test_a_response_in_full(client: openai.AsyncOpenAI) -> None:
    response = await client.responses.create(model="mock-1", input="hello", instructions="be brief")
    assert response.status == "completed"
    assert response.object == "response"
    assert response.output_text.endswith("] hello")
    assert response.output[0].type == "message"
    assert response.usage is not None
    assert response.usage.input_tokens == 4  # "be brief\nhello": 14 characters
    assert response.usage.input_tokens_details.cached_tokens == 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens


async def test_a_response_cut_short_is_incomplete(client: openai.AsyncOpenAI) -> None:
    response = await client.responses.create(model="mock-1", input="x" * 100, max_output_tokens=16)
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert len(response.output_text) == 64


async def test_a_streamed_response_sends_the_events_in_order(client: openai.AsyncOpenAI) -> None:
    stream = await client.responses.create(model="mock-1", input="three little words", stream=True)
    events = [event async for event in stream]
    types = [event.type for event in events]
    assert types[:3] == [
        "response.created",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert types[3:-4] == ["response.output_text.delta"] * 5
    assert types[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [event.sequence_number for event in events] == list(range(len(events)))
    deltas = "".join(event.delta for event in events if event.type == "response.output_text.delta")
    final = events[-1]
    assert final.type == "response.completed"
    assert final.response.output_text == deltas


async def test_the_sdks_stream_helper_assembles_the_response(client: openai.AsyncOpenAI) -> None:
    async with client.responses.stream(model="mock-1", input="assemble me") as stream:
        texts = [
            event.delta async for event in stream if event.type == "response.output_text.delta"
        ]
        final = await stream.get_final_response()
    assert final.output_text == "".join(texts)
    assert final.output_text.endswith("] assemble me")


async def test_a_chat_completion_in_full(client: openai.AsyncOpenAI) -> None:
    completion = await client.chat.completions.create(
        model="mock-1", messages=[{"role": "user", "content": "hi"}], max_tokens=2
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "length"
    assert choice.message.content is not None
    assert choice.message.content.startswith("[mock ")
    assert len(choice.message.content) == 8
    assert completion.usage is not None
    assert completion.usage.completion_tokens == 2


@pytest.mark.parametrize("include_usage", [True, False])
async def test_a_streamed_chat_completion(client: openai.AsyncOpenAI, include_usage: bool) -> None:
    stream = await client.chat.completions.create(
        model="mock-1",
        messages=[{"role": "user", "content": "stream this"}],
        stream=True,
        stream_options={"include_usage": include_usage},
    )
    chunks = [chunk async for chunk in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    with_choices = [chunk for chunk in chunks if chunk.choices]
    assert with_choices[-1].choices[0].finish_reason == "stop"
    text = "".join(chunk.choices[0].delta.content or "" for chunk in with_choices)
    assert text.endswith("] stream this")
    usage = [chunk.usage for chunk in chunks if chunk.usage is not None]
    assert len(usage) == (1 if include_usage else 0)


async def test_no_limits_means_no_rate_limit_headers(client: openai.AsyncOpenAI) -> None:
    raw = await client.responses.with_raw_response.create(model="mock-1", input="headers?")
    assert not [name for name in raw.headers if name.startswith("x-ratelimit")]


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/responses", {"input": "no model"}, "model"),
        ("/chat/completions", {"model": "m", "messages": "hi"}, "messages"),
        ("/responses", {"model": "m", "input": "[fault:nope]"}, "unknown fault 'nope'"),
    ],
)
async def test_malformed_requests_get_an_openai_style_400(
    base_url: str, path: str, body: dict[str, object], message: str
) -> None:
    async with httpx.AsyncClient(base_url=base_url) as http:
        response = await http.post(path, json=body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert message in error["message"]


async def test_a_body_that_is_not_json_gets_a_400(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url) as http:
        response = await http.post("/responses", content=b"{not json")
    assert response.status_code == 400
