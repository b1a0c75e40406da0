"""Answers that break on the wire, and error bodies not in OpenAI's shape, through the SDK.

The mock breaks them as scripted (`[fault:...]`, see `backroom.llm.mock.broken`); the
official SDK reads them over loopback HTTP and `respond` classifies what it raised.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import openai
import pytest

from backroom.core.errors import JobError, Permanent, Retryable
from backroom.llm.config import ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.providers.openai.call import make_client, respond
from backroom.llm.request import LLMRequest

APIS = pytest.mark.parametrize("chat_only", [False, True], ids=["responses", "chat"])


class StillClock:
    def now(self) -> int:
        return 1_800_000_000_000

    async def sleep(self, ms: float) -> None:
        raise AssertionError("nothing here should wait")


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig()) as url:
        yield url


@pytest.fixture
async def client(base_url: str) -> AsyncIterator[openai.AsyncOpenAI]:
    client = make_client(ProviderConfig("mock", base_url), timeout_s=10)
    yield client
    await client.close()


async def _failure(
    client: openai.AsyncOpenAI, text: str, *, chat_only: bool, stream: bool
) -> JobError:
    request = LLMRequest("mock-1", text, stream=stream)
    with pytest.raises((Retryable, Permanent)) as raised:
        await respond(client, request, chat_only=chat_only, clock=StillClock())
    return raised.value


async def test_a_failure_mid_stream_is_retryable(client: openai.AsyncOpenAI) -> None:
    responses = LLMRequest("mock-1", "[fault:stream_error] responses", stream=True)
    with pytest.raises(Retryable, match=r"^StreamError \(server_error\): The server had an error"):
        await respond(client, responses, chat_only=False, clock=StillClock())
    chat = LLMRequest("mock-1", "[fault:stream_error] chat", stream=True)
    with pytest.raises(Retryable, match=r"^APIError \(server_error\): The server had an error"):
        await respond(client, chat, chat_only=True, clock=StillClock())


async def test_stream_error_without_streaming_is_a_server_error(client: openai.AsyncOpenAI) -> None:
    error = await _failure(client, "[fault:stream_error] whole", chat_only=False, stream=False)
    assert type(error) is Retryable
    assert str(error).startswith("InternalServerError (HTTP 500)")


@APIS
async def test_a_malformed_chunk_is_retryable_and_says_where(
    client: openai.AsyncOpenAI, chat_only: bool
) -> None:
    error = await _failure(
        client, f"[fault:malformed_chunk] {chat_only}", chat_only=chat_only, stream=True
    )
    assert type(error) is Retryable
    message = str(error)
    assert message.startswith("StreamError (malformed_chunk): a chunk of the stream (after ")
    assert "is not valid JSON (Unterminated string" in message
    assert message.endswith("""'{"type": "response.output_text.delta", "delta": "unfini'""")


@APIS
async def test_a_stream_cut_off_mid_way_is_retryable(
    client: openai.AsyncOpenAI, chat_only: bool
) -> None:
    error = await _failure(client, f"[fault:cut_off] {chat_only}", chat_only=chat_only, stream=True)
    assert type(error) is Retryable
    first_word = len("[mock ")  # the first delta
    assert str(error) == (
        f"StreamError (cut_off): the connection closed mid-stream after {first_word} characters"
        " of output (RemoteProtocolError: peer closed connection without sending complete"
        " message body (incomplete chunked read))"
    )


@APIS
async def test_a_stream_without_its_last_event_is_retryable(
    client: openai.AsyncOpenAI, chat_only: bool
) -> None:
    text = f"[fault:no_terminal] {chat_only}"
    error = await _failure(client, text, chat_only=chat_only, stream=True)
    assert type(error) is Retryable
    terminal = (
        "a chunk with a finish_reason"
        if chat_only
        else "response.completed, response.incomplete or response.failed"
    )
    assert str(error) == (
        f"StreamError (no_terminal_event): the stream ended without {terminal}, "
        "after 6 characters of output"
    )


@APIS
async def test_a_plain_answer_that_is_not_json_is_retryable(
    client: openai.AsyncOpenAI, chat_only: bool
) -> None:
    text = f"[fault:malformed_chunk] whole {chat_only}"
    error = await _failure(client, text, chat_only=chat_only, stream=False)
    assert type(error) is Retryable
    assert str(error).startswith("StreamError (malformed_chunk): the provider's answer is not")
    assert isinstance(error.__cause__, ValueError)


@APIS
async def test_a_plain_answer_cut_off_is_retryable(
    client: openai.AsyncOpenAI, chat_only: bool
) -> None:
    text = f"[fault:cut_off] whole {chat_only}"
    error = await _failure(client, text, chat_only=chat_only, stream=False)
    assert type(error) is Retryable
    assert str(error).startswith("APIConnectionError: Connection error. (RemoteProtocolError: ")


@pytest.mark.parametrize(
    ("shape", "words"),
    [
        ("detail", '{"detail": "Scripted fault: 404"}'),
        ("text", "404 scripted fault: not an OpenAI error body"),
        ("empty", "Error code: 404"),
    ],
)
async def test_a_foreign_error_body_is_kept_with_the_path_and_a_chat_only_hint(
    client: openai.AsyncOpenAI, shape: str, words: str
) -> None:
    error = await _failure(client, f"[fault:404:body={shape}]", chat_only=False, stream=False)
    assert type(error) is Permanent
    assert str(error) == (
        f"NotFoundError (HTTP 404): {words} (POST /v1/responses); if this server has no "
        "Responses API, set `chat_only = true` on its provider in the LLM config"
    )


async def test_a_foreign_error_body_from_chat_completions_has_no_hint(
    client: openai.AsyncOpenAI,
) -> None:
    error = await _failure(client, "[fault:503:body=text]", chat_only=True, stream=True)
    assert type(error) is Retryable
    assert str(error) == (
        "InternalServerError (HTTP 503): 503 scripted fault: not an OpenAI error body "
        "(POST /v1/chat/completions)"
    )
