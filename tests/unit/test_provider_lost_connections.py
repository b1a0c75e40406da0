"""A request whose connection is lost before any answer is sent once more, at once, by
the providers' SDK clients (`backroom.llm.providers.http_client`); nothing else is.

The server here is a real one on loopback that closes a connection at a chosen request
instead of answering: what a keep-alive connection closed by the server just as a
request went out on it looks like to the client.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anthropic
import openai
import pytest

from backroom.llm.providers.anthropic.provider import make_client as anthropic_client
from backroom.llm.providers.openai.call import make_client as openai_client
from backroom.llm.settings import ProviderConfig, ProviderKind

COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
    ],
}

Answer = Callable[[int], int | None]
"""Given a request's number on its connection (0 first), the status to answer with, or
None to close the connection unanswered."""


@dataclass
class Server:
    """What the server saw: connections opened, requests read."""

    url: str
    connections: int = 0
    requests: int = 0
    paths: list[str] = field(default_factory=list)


@asynccontextmanager
async def server(answer: Answer) -> AsyncIterator[Server]:
    seen = Server("")

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.connections += 1
        number = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode().split("\r\n")
                seen.paths.append(lines[0].split()[1])
                length = next(
                    (
                        int(line.split(":")[1])
                        for line in lines
                        if line.lower().startswith("content-length:")
                    ),
                    0,
                )
                await reader.readexactly(length)
                seen.requests += 1
                status = answer(number)
                number += 1
                if status is None:
                    return
                body = json.dumps(COMPLETION if status == 200 else {"error": "busy"}).encode()
                writer.write(
                    f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n"
                    f"content-length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except asyncio.IncompleteReadError:
            return
        finally:
            writer.close()

    listening = await asyncio.start_server(serve, "127.0.0.1", 0)
    seen.url = f"http://127.0.0.1:{listening.sockets[0].getsockname()[1]}/v1"
    async with listening:
        yield seen


def provider(url: str, kind: ProviderKind = "openai") -> ProviderConfig:
    return ProviderConfig("local", url, kind=kind, api_key="k")


async def complete(client: openai.AsyncOpenAI) -> str | None:
    reply = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}]
    )
    return reply.choices[0].message.content


async def test_a_request_on_a_connection_closed_under_it_is_sent_again_on_another() -> None:
    # Each connection answers its first request and drops its second unanswered.
    async with server(lambda number: 200 if number == 0 else None) as seen:
        client = openai_client(provider(seen.url), timeout_s=5)
        try:
            assert await complete(client) == "hi"
            assert await complete(client) == "hi"  # lost on the kept connection, then sent again
        finally:
            await client.close()

    assert (seen.connections, seen.requests) == (2, 3)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_request_lost_twice_fails_after_one_more_try(kind: ProviderKind) -> None:
    async with server(lambda number: None) as seen:
        config = provider(seen.url, kind)
        if kind == "anthropic":
            client_a = anthropic_client(config, timeout_s=5)
            with pytest.raises(anthropic.APIConnectionError):
                await client_a.messages.create(
                    model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
                )
            await client_a.close()
        else:
            client_o = openai_client(config, timeout_s=5)
            with pytest.raises(openai.APIConnectionError):
                await complete(client_o)
            await client_o.close()

    assert (seen.connections, seen.requests) == (2, 2)


async def test_an_answer_is_never_sent_again_here_even_a_server_error() -> None:
    async with server(lambda number: 503) as seen:
        client = openai_client(provider(seen.url), timeout_s=5)
        try:
            with pytest.raises(openai.InternalServerError):
                await complete(client)
        finally:
            await client.close()

    assert seen.requests == 1  # backroom's retry policy decides what comes next
