"""A fast webhook receiver for the benchmarks: answers every POST 204, says when it got it.

    python -m bench.hook_sink

It runs in a process of its own (so its parsing does not share a core's time slices
with the sender's loop), listens on a free loopback port, prints `port N`, then one line
`JOB_ID RECEIVED_NS` per request (the job id from the payload, the wall clock in
nanoseconds when the request's last byte was parsed), flushed every 20 ms, until stdin
closes. HTTP/1.1
keep-alive with httptools' parser: no framework between the socket and the answer.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import httptools

_NO_CONTENT = b"HTTP/1.1 204 No Content\r\n\r\n"


class _Connection(asyncio.Protocol):
    """One keep-alive connection: parse requests, answer each 204, report it."""

    def __init__(self) -> None:
        self._parser = httptools.HttpRequestParser(self)
        self._body: list[bytes] = []
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._parser.feed_data(data)

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        received = time.time_ns()
        assert self._transport is not None
        self._transport.write(_NO_CONTENT)
        job_id = json.loads(b"".join(self._body))["data"]["job_id"]
        self._body.clear()
        sys.stdout.write(f"{job_id} {received}\n")
        _flush_soon()


_FLUSH_S = 0.02
_flushing: list[asyncio.TimerHandle] = []


def _flush_soon() -> None:
    """Flush the reports within `_FLUSH_S`: a line a request woke the reading benchmark
    (a thread of the sender's process) hundreds of times a second, and its wake-ups took
    the sender's interpreter lock from the loop being measured."""
    if not _flushing:
        _flushing.append(asyncio.get_running_loop().call_later(_FLUSH_S, _flush))


def _flush() -> None:
    _flushing.clear()
    sys.stdout.flush()


async def serve() -> None:
    """Listen until stdin closes."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(_Connection, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(f"port {port}", flush=True)
    await asyncio.to_thread(sys.stdin.read)
    server.close()
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(serve())
