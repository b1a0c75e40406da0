"""HTTP/1.1 POSTs for webhooks over kept-alive connections, parsed by httptools.

A webhook sender needs little of an HTTP client: one method, a body held in memory, the
answer's status and headers (the body is read and dropped), no redirects, no cookies,
no proxies, and the address to connect to given (`backroom.webhooks.targets` checked it).
httpx did it at ~0.4 ms of CPU a POST, most of it in layers this use never needs (its
pool asked every kept connection's socket whether it was still open, on every request),
which held one worker process to ~400 deliveries a second. Here a POST is one write and
the reads its answer takes, parsed by the same C parser uvicorn uses.

Connections are kept per origin (scheme, address, port, host name), the most recently
used first, each for up to 5 s idle (8 per origin, 64 in all by default). A kept
connection the receiver closed meanwhile is found closed and dropped; one that it closes
just as the request goes out is lost before any answer, and the request is sent once
more on a new connection (a receiver tells deliveries apart by their `webhook-id`, so a
resend is harmless). Anything else the connection does wrong is an
`HttpPostError`.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import quote

import httptools

from backroom.clock import Clock

MAX_ANSWER_BODY = 64 * 1024
"""Bytes of an answer's body read at most; past them the connection is closed."""


class HttpPostError(Exception):
    """The POST got no usable answer: the connection failed, closed or spoke no HTTP."""


class _LostBeforeAnswer(HttpPostError):
    """The connection closed before a byte of the answer came."""


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a POST goes: `address` to connect to, `host` for the Host header and TLS."""

    scheme: str
    address: str
    port: int
    host: str
    host_header: str


@dataclass(slots=True)
class HttpAnswer:
    """An answer's status and headers (names in lower case; a repeated one: its last)."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)


def request_bytes(
    origin: Origin, path: str, headers: Iterable[tuple[str, str]], body: bytes
) -> bytes:
    """The whole request: POST `path` (characters a URL may not hold percent-encoded)."""
    target = quote(path or "/", safe="/%:@!$&'()*+,;=-._~?")
    lines = [f"POST {target} HTTP/1.1", f"host: {origin.host_header}"]
    for name, value in headers:
        if "\r" in value or "\n" in value:
            raise HttpPostError(f"header {name} holds a line break")
        lines.append(f"{name}: {value}")
    lines.append(f"content-length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class _Connection(asyncio.Protocol):
    """One connection: sends a request, parses its answer, and says if it can be kept."""

    def __init__(self) -> None:
        self._transport: asyncio.Transport | None = None
        self._parser: httptools.HttpResponseParser | None = None
        self._answer: asyncio.Future[HttpAnswer] | None = None
        self._headers: dict[str, str] = {}
        self._status = 0
        self._body = 0
        self._got_bytes = False
        self._lost = False
        self.reusable = False

    @property
    def open(self) -> bool:
        """Whether the connection is still open (the receiver has not closed it)."""
        return not self._lost and self._transport is not None and not self._transport.is_closing()

    async def exchange(self, request: bytes) -> HttpAnswer:
        """Send `request`; its answer. The connection is `reusable` afterwards or closed."""
        assert self._transport is not None
        if not self.open:
            raise _LostBeforeAnswer("the connection closed before the request went out")
        self.reusable = False
        self._parser = httptools.HttpResponseParser(self)
        self._answer = asyncio.get_running_loop().create_future()
        self._headers, self._status, self._body = {}, 0, 0
        self._got_bytes = False
        self._transport.write(request)
        try:
            return await self._answer
        except BaseException:
            self.close()  # a timeout or a failure: what it would read next is unknown
            raise

    def close(self) -> None:
        """Close the connection now."""
        self.reusable = False
        if self._transport is not None:
            self._transport.close()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        if self._parser is None or self._answer is None or self._answer.done():
            self.close()  # bytes nobody asked for: the connection is out of step
            return
        self._got_bytes = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(HttpPostError(f"not an HTTP answer: {error}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost, self.reusable = True, False
        if self._answer is None or self._answer.done():
            return
        if self._status >= 200:  # the headers came: a body read until the connection closes
            self._answer.set_result(HttpAnswer(self._status, self._headers))
        elif self._got_bytes:
            self._fail(HttpPostError("the connection closed in the middle of the answer"))
        else:
            self._fail(_LostBeforeAnswer("the connection closed before an answer"))

    # httptools' callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        assert self._parser is not None
        self._status = self._parser.get_status_code()

    def on_body(self, body: bytes) -> None:
        self._body += len(body)
        if self._body > MAX_ANSWER_BODY and self._answer is not None:
            if not self._answer.done():
                self._answer.set_result(HttpAnswer(self._status, self._headers))
            self.close()

    def on_message_complete(self) -> None:
        if self._status < 200:  # 1xx: an interim answer, the real one follows
            self._headers = {}
            return
        assert self._parser is not None and self._answer is not None
        if not self._answer.done():
            self.reusable = self._parser.should_keep_alive()
            self._answer.set_result(HttpAnswer(self._status, self._headers))

    def _fail(self, error: HttpPostError) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_exception(error)
        self.close()


class HttpPoster:
    """POSTs to origins over connections it keeps for a while between them.

    At most `keep` idle connections per origin and `keep_total` in all are kept, each for
    at most `idle_ms` (as httpx did: receivers close idle connections after a few
    seconds, uvicorn after 5, and a worker that sent one webhook to each of many receivers
    must not hold their sockets). `tls` verifies https receivers (None: certifi's
    certificate authorities, as httpx trusted before; made at the first https POST, ~25 ms
    of CPU). A POST is not bounded in time here: the caller wraps it in a timeout, and a
    connection whose POST was abandoned is closed, never kept.
    """

    def __init__(
        self,
        clock: Clock,
        *,
        tls: ssl.SSLContext | None = None,
        keep: int = 8,
        keep_total: int = 64,
        idle_ms: int = 5_000,
    ) -> None:
        self._clock = clock
        self._tls = tls
        self._keep, self._keep_total, self._idle_ms = keep, keep_total, idle_ms
        # Idle connections by origin, the most recently used last, with when each went idle.
        self._idle: dict[Origin, list[tuple[int, _Connection]]] = {}

    async def post(
        self, origin: Origin, path: str, headers: Iterable[tuple[str, str]], body: bytes
    ) -> HttpAnswer:
        """POST `body` to `path` at `origin`; the answer, or `HttpPostError` (or `OSError`)."""
        request = request_bytes(origin, path, headers, body)
        connection = self._kept(origin)
        if connection is not None:
            try:
                return self._after(origin, connection, await connection.exchange(request))
            except _LostBeforeAnswer:
                pass  # closed by the receiver as the request went out: send it once more
        connection = await self._connect(origin)
        return self._after(origin, connection, await connection.exchange(request))

    @property
    def _idle_count(self) -> int:
        """How many idle connections are kept, to every origin."""
        return sum(len(idle) for idle in self._idle.values())

    def kept(self, origin: Origin) -> int:
        """How many idle connections to `origin` are kept open."""
        return sum(connection.open for _, connection in self._idle.get(origin, ()))

    async def close(self) -> None:
        """Close every kept connection."""
        self._drop(lambda _: True)

    def _kept(self, origin: Origin) -> _Connection | None:
        """The most recently used idle connection to `origin` that is still open and fresh."""
        idle, fresh_since = self._idle.get(origin), self._clock.now() - self._idle_ms
        while idle:
            since, connection = idle.pop()
            if connection.open and since >= fresh_since:
                return connection
            connection.close()
        return None

    def _after(self, origin: Origin, connection: _Connection, answer: HttpAnswer) -> HttpAnswer:
        """Keep `connection` idle for the next POST to `origin` if it may be; `answer`."""
        now = self._clock.now()
        if self._idle_count >= self._keep_total:  # make room: let the stale ones go
            self._drop(lambda since: since < now - self._idle_ms)
        idle = self._idle.setdefault(origin, [])
        if (
            connection.reusable
            and connection.open
            and len(idle) < self._keep
            and self._idle_count < self._keep_total
        ):
            idle.append((now, connection))
        else:
            connection.close()
        return answer

    def _drop(self, stale: Callable[[int], bool]) -> None:
        """Close the idle connections that are `stale` (by when they went idle) or closed."""
        for origin, idle in list(self._idle.items()):
            kept: list[tuple[int, _Connection]] = []
            for since, connection in idle:
                if connection.open and not stale(since):
                    kept.append((since, connection))
                else:
                    connection.close()
            if kept:
                self._idle[origin] = kept
            else:
                del self._idle[origin]

    async def _connect(self, origin: Origin) -> _Connection:
        loop = asyncio.get_running_loop()
        secure = origin.scheme == "https"
        _, connection = await loop.create_connection(
            _Connection,
            host=origin.address,
            port=origin.port,
            ssl=self._context() if secure else None,
            server_hostname=origin.host if secure else None,
        )
        return connection

    def _context(self) -> ssl.SSLContext:
        if self._tls is None:
            # Imported here: certifi loads importlib.resources, ~5 ms at every worker's start.
            import certifi  # noqa: PLC0415

            self._tls = ssl.create_default_context(cafile=certifi.where())
        return self._tls
