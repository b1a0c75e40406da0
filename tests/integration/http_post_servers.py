"""Loopback receivers for the webhook POST tests: a scripted asyncio server that does what
a well-behaved one never would, on purpose, and an ASGI app for uvicorn (the server many
receivers run)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from backroom.webhooks.http_post import Origin

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
OK = b"HTTP/1.1 204 No Content\r\n\r\n"


def async_of(predicate: Callable[[], bool]) -> Callable[[], Awaitable[bool]]:
    async def condition() -> bool:
        return predicate()

    return condition


def origin(port: int, scheme: str = "http", host: str = "127.0.0.1") -> Origin:
    return Origin(scheme, "127.0.0.1", port, host, f"{host}:{port}")


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """One whole request (headers and its content-length body)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return head + await reader.readexactly(length)


@asynccontextmanager
async def scripted(*scripts: Script) -> AsyncIterator[tuple[int, list[bytes]]]:
    """A server whose n-th connection runs `scripts[n]`; its port and the requests read."""
    requests: list[bytes] = []
    connections = iter(scripts)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await next(connections)(reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield port, requests
    finally:
        server.close()


def answering(*answers: bytes, then_close: bool = False, log: list[bytes]) -> Script:
    """Read a request and write each answer in turn, then wait for the client to leave."""

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for answer in answers:
            log.append(await read_request(reader))
            writer.write(answer)
            await writer.drain()
        if then_close:
            return
        await reader.read()  # until the client closes

    return script


async def asgi_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """204 for /ok; a chunked 200 for /chunked; 429 with Retry-After for /busy."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    client_port = str(scope["client"][1]).encode()
    if scope["path"] == "/chunked":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for part in (b"hello ", b"world", b""):
            await send({"type": "http.response.body", "body": part, "more_body": part != b""})
        return
    status, headers = (429, [(b"retry-after", b"7")]) if scope["path"] == "/busy" else (204, [])
    headers.append((b"x-client-port", client_port))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b""})
