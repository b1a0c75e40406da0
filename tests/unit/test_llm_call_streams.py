"""Streams that end badly, served by a scripted transport instead of a server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx2
import openai
import pytest

from backroom.core.errors import Permanent, Retryable
from backroom.llm.providers.openai.call import respond
from backroom.llm.request import LLMRequest


class StillClock:
    def now(self) -> int:
        return 0

    async def sleep(self, ms: float) -> None:
        raise AssertionError("nothing here should wait")


def _sse(*events: dict[str, object]) -> bytes:
    return b"".join(f"data: {json.dumps(event)}\n\n".encode() for event in events)


class Script:
    """The event-stream body every request gets; a test sets it."""

    def __init__(self) -> None:
        self.body = b""

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        headers = {"content-type": "text/event-stream"}
        return httpx2.Response(200, content=self.body, headers=headers)


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
async def client(script: Script) -> AsyncIterator[openai.AsyncOpenAI]:
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(script.handle))
    async with openai.AsyncOpenAI(
        api_key="unused", base_url="http://provider.test/v1", max_retries=0, http_client=http
    ) as client:
        yield client


async def _stream(client: openai.AsyncOpenAI, *, chat_only: bool) -> None:
    request = LLMRequest("m", "hi", stream=True)
    await respond(client, request, chat_only=chat_only, clock=StillClock())


CREATED = {
    "type": "response.created",
    "sequence_number": 0,
    "response": {"id": "r", "status": "in_progress"},
}


async def test_a_response_stream_that_stops_early_is_retryable(
    client: openai.AsyncOpenAI, script: Script
) -> None:
    script.body = _sse(CREATED)
    with pytest.raises(Retryable, match=r"^StreamError \(no_terminal_event\): the stream ended"):
        await _stream(client, chat_only=False)


async def test_an_error_event_is_judged_by_its_code(
    client: openai.AsyncOpenAI, script: Script
) -> None:
    error = {"type": "error", "sequence_number": 1, "code": "invalid_prompt", "message": "flagged"}
    script.body = _sse(CREATED, error)
    with pytest.raises(Permanent, match=r"^StreamError \(invalid_prompt\): flagged$"):
        await _stream(client, chat_only=False)


async def test_a_chat_stream_without_a_finish_is_retryable(
    client: openai.AsyncOpenAI, script: Script
) -> None:
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "half"}, "finish_reason": None}],
    }
    script.body = _sse(chunk) + b"data: [DONE]\n\n"
    with pytest.raises(
        Retryable, match=r"without a chunk with a finish_reason, after 4 characters"
    ):
        await _stream(client, chat_only=True)


async def test_an_empty_chat_stream_is_retryable(
    client: openai.AsyncOpenAI, script: Script
) -> None:
    script.body = b"data: [DONE]\n\n"
    with pytest.raises(Retryable, match=r"^StreamError \(no_terminal_event\): the stream ended"):
        await _stream(client, chat_only=True)
