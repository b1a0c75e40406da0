"""Limits on what a client may make the server hold: request heads, time, connections.

uvicorn bounds none of these with its parser in C (httptools): a 100 MB header is
buffered and parsed, a connection that never sends a byte is kept for ever, and
every connection is accepted. `guarded_protocol(limits)` is uvicorn's httptools
protocol with the limits added, answered as RFC 9457 problems before the
connection is closed:

- a request head (request line and headers) over `max_head_bytes`, or with more
  than `max_headers` headers: 431, as soon as the limit is passed, so no more than
  the limit (plus one read) is ever held;
- a URL over `max_url_bytes`: 414;
- a head that has not fully arrived `header_timeout_s` after the connection opened
  (or after the first byte of a later request on it): 408, so connections that send
  nothing, or trickle a byte at a time, are closed;
- a connection beyond `max_connections` open at once: 503 to its first request.

Between requests, an idle keep-alive connection is closed after `idle_timeout_s`
(uvicorn's `timeout_keep_alive`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from backroom.config import HttpLimits
from backroom.service.replies import HTTP_TITLES, problem


class _Refused(Exception):
    """Raised in a parser callback to stop parsing; the refusal is already chosen."""


def _problem_bytes(status: int, detail: str) -> bytes:
    body = json.dumps(problem(status, detail).body).encode()
    head = (
        f"HTTP/1.1 {status} {HTTP_TITLES.get(status, 'Error')}\r\n"
        "content-type: application/problem+json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode() + body


class _GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with `limits` enforced (see the module)."""

    limits: ClassVar[HttpLimits]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._awaiting_head = True
        self._head_bytes = 0
        self._url_bytes = 0
        self._header_count = 0
        self._parsed_head_bytes = 0
        self._over_capacity = False
        self._refusal: tuple[int, str] | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Count the connection and start the clock on its first request head."""
        super().connection_made(transport)
        self._over_capacity = len(self.connections) > self.limits.max_connections
        self._start_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the head clock along with the connection."""
        self._stop_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Parse `data`, refusing the request once its head is over the limit."""
        if self._over_capacity:
            self._refuse(503, "the server has too many open connections; try again")
            return
        if self._awaiting_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if (
            self._awaiting_head
            and self._head_bytes > self.limits.max_head_bytes
            and not self.transport.is_closing()
        ):
            self._refuse(431, f"the request head is over {self.limits.max_head_bytes} bytes")

    def send_400_response(self, msg: str) -> None:
        """Answer a parse failure: with the refusal a callback chose, if it chose one."""
        if self._refusal is None:
            super().send_400_response(msg)
        else:
            self._refuse(*self._refusal)

    def on_message_begin(self) -> None:
        """A new request starts: its head is counted and timed from here."""
        super().on_message_begin()
        self._url_bytes = self._header_count = self._parsed_head_bytes = 0
        if self._head_timer is None:
            self._start_head_timer()

    def on_url(self, url: bytes) -> None:
        """Collect the URL, up to `max_url_bytes`."""
        self._url_bytes += len(url)
        if self._url_bytes > self.limits.max_url_bytes:
            self._refusal = (414, f"the URL is over {self.limits.max_url_bytes} bytes")
            raise _Refused
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        """Collect a header, up to `max_headers` of them and `max_head_bytes` in all."""
        self._header_count += 1
        if self._header_count > self.limits.max_headers:
            self._refusal = (431, f"the request has over {self.limits.max_headers} headers")
            raise _Refused
        # A head that arrived in one read is measured here; one still arriving, above.
        self._parsed_head_bytes += len(name) + len(value) + 4  # ": " and CRLF
        if self._url_bytes + self._parsed_head_bytes > self.limits.max_head_bytes:
            self._refusal = (431, f"the request head is over {self.limits.max_head_bytes} bytes")
            raise _Refused
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        """The head is in: stop its clock and hand the request on."""
        self._stop_head_timer()
        self._awaiting_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        """The request is in; the next one's head is counted afresh."""
        super().on_message_complete()
        self._awaiting_head = True
        self._head_bytes = 0

    def _start_head_timer(self) -> None:
        self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_late)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self._awaiting_head and not self.transport.is_closing():
            timeout = self.limits.header_timeout_s
            self._refuse(408, f"the request head did not arrive within {timeout:g} s")

    def _refuse(self, status: int, detail: str) -> None:
        self.logger.warning("refused a request from %s: %s %s", self.client, status, detail)
        self._stop_head_timer()
        self.transport.write(_problem_bytes(status, detail))
        self.transport.close()


def guarded_protocol(limits: HttpLimits) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol class, enforcing `limits`; pass it as `http=`."""
    return type("GuardedHttpToolsProtocol", (_GuardedHttpToolsProtocol,), {"limits": limits})


def uvicorn_options(limits: HttpLimits) -> dict[str, Any]:
    """The `uvicorn.Config` arguments that carry `limits`."""
    return {
        "http": guarded_protocol(limits),
        "timeout_keep_alive": limits.idle_timeout_s,
        # uvicorn's own cap counts the asking connection too; ours is exact (above).
        "limit_concurrency": limits.max_connections + 1,
    }
