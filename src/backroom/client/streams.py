"""Following a server's event streams: a job's (`/v1/jobs/{id}/events`) or the feed's.

A stream is read with httpx-sse. When the connection drops, or the server says the
client fell behind, the client reconnects with `Last-Event-ID` set to the last event it
got, so it misses nothing and sees nothing twice; after `MAX_RECONNECTS` failures in a
row it gives up with `ServerUnreachable`. A job's stream ends when the job does (the
server closes it); the feed's runs until the caller stops iterating.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from httpx_sse import ServerSentEvent, aconnect_sse, connect_sse

from backroom.client.errors import ServerUnreachable, error_for
from backroom.core.job import JSON

MAX_RECONNECTS = 5
KEEPALIVE_WAIT_S = 45.0
"""How long a stream may be silent before the client reconnects (keep-alives are 15 s)."""
TERMINAL_TYPES = frozenset({"job.succeeded", "job.failed", "job.cancelled"})


@dataclass(frozen=True, slots=True)
class Event:
    """One event of a stream: its id (to resume after), type, job and data."""

    id: str | None
    type: str
    job_id: int | None
    data: dict[str, JSON] = field(default_factory=dict)

    @property
    def terminal(self) -> bool:
        """Whether the job this event is about has ended."""
        return self.type in TERMINAL_TYPES


class StreamUnavailable(Exception):
    """The server offers no event stream here (an older server): poll instead."""


@dataclass(frozen=True, slots=True)
class StreamRequest:
    """Which stream to follow, from where, and whether a clean close ends it."""

    path: str
    params: Mapping[str, str | Sequence[str]]
    after: str | None = None
    ends_on_close: bool = True
    read_timeout_s: float | None = None
    """Give up (`httpx.ReadTimeout`) after this long without a byte; None: reconnect."""

    def timeout(self) -> httpx.Timeout:
        """The stream's timeouts: reads wait past the server's 15 s keep-alive comments."""
        return httpx.Timeout(10.0, read=self.read_timeout_s or KEEPALIVE_WAIT_S)

    def headers(self, last: str | None) -> dict[str, str]:
        """The request headers: `Last-Event-ID` once an event was seen."""
        return {"Last-Event-ID": last} if last else {}


def job_stream(
    job_id: int, after: str | None, read_timeout_s: float | None = None
) -> StreamRequest:
    """The stream of one job's events, ending with the job."""
    return StreamRequest(f"/v1/jobs/{job_id}/events", {}, after, read_timeout_s=read_timeout_s)


def feed_stream(
    after: str | None, tasks: Sequence[str], queues: Sequence[str], types: Sequence[str]
) -> StreamRequest:
    """The caller's feed, filtered; it does not end by itself."""
    params = {"task": list(tasks), "queue": list(queues), "type": list(types)}
    kept = {name: values for name, values in params.items() if values}
    return StreamRequest("/v1/events", kept, after, ends_on_close=False)


def _event(sse: ServerSentEvent) -> Event:
    data = json.loads(sse.data) if sse.data else {}
    job_id = data.get("job_id") if isinstance(data, dict) else None
    return Event(
        sse.id or None,
        sse.event or "message",
        job_id if isinstance(job_id, int) else None,
        data if isinstance(data, dict) else {},
    )


def _check(response: httpx.Response) -> None:
    """Raise the client error a refused stream request means (read its body first)."""
    if response.status_code == 200:
        return
    if response.status_code in (404, 405) and not response.text.count("job-not-found"):
        raise StreamUnavailable(response.request.url.path)
    raise error_for(response)


class _Position:
    """The last event id seen, and how many reconnects failed in a row."""

    def __init__(self, request: StreamRequest) -> None:
        self.request = request
        self.last = request.after
        self.failures = 0

    def connection(self) -> dict[str, Any]:
        """The arguments of (a)connect_sse beside the client, method and path."""
        request = self.request
        return {
            "params": request.params,
            "headers": request.headers(self.last),
            "timeout": request.timeout(),
        }

    def take(self, sse: ServerSentEvent) -> Event:
        """The event `sse` carries; a server's `error` event breaks the stream to reconnect."""
        event = _event(sse)
        if event.type == "error":
            raise httpx.ReadError(str(event.data.get("detail", "stream error")))
        self.failures = 0
        if event.id:
            self.last = event.id
        return event

    def pause_after(self, error: httpx.TransportError) -> float:
        """Seconds to wait before reconnecting after `error` (raised again when it ends the
        wait: a silence past `read_timeout_s`, or too many failures in a row)."""
        if isinstance(error, httpx.ReadTimeout):
            if self.request.read_timeout_s is not None:
                raise error
            self._count(TimeoutError("silent stream"))
            return 0.0
        self._count(error)
        return min(2.0, 0.1 * (1 << self.failures))

    def _count(self, error: Exception) -> None:
        self.failures += 1
        if self.failures > MAX_RECONNECTS:
            raise ServerUnreachable(f"the event stream keeps failing: {error}") from error


def follow(
    http: httpx.Client, request: StreamRequest, pause: Callable[[float], None]
) -> Iterator[Event]:
    """The stream's events as they come, reconnecting where it left off."""
    position = _Position(request)
    while True:
        try:
            with connect_sse(http, "GET", request.path, **position.connection()) as source:
                if source.response.status_code != 200:
                    source.response.read()
                _check(source.response)
                for sse in source.iter_sse():
                    yield position.take(sse)
            if request.ends_on_close:
                return
        except httpx.TransportError as error:
            pause(position.pause_after(error))


async def afollow(
    http: httpx.AsyncClient,
    request: StreamRequest,
    pause: Callable[[float], Awaitable[None]],
) -> AsyncIterator[Event]:
    """`follow` for `httpx.AsyncClient`; `pause` is awaited between reconnects."""
    position = _Position(request)
    while True:
        try:
            async with aconnect_sse(http, "GET", request.path, **position.connection()) as source:
                if source.response.status_code != 200:
                    await source.response.aread()
                _check(source.response)
                async for sse in source.aiter_sse():
                    yield position.take(sse)
            if request.ends_on_close:
                return
        except httpx.TransportError as error:
            await pause(position.pause_after(error))
