"""Notifications for the PostgreSQL store: LISTEN on a connection of its own.

A LISTEN lasts as long as its session, so the listener keeps one dedicated connection
rather than borrowing from the pool, and listens there on every channel the process
wants: new work (for its workers) and the event feed (for a webhook dispatcher or an
event stream), one connection for both. When that connection drops (a server restart,
a terminated backend) it reconnects with capped exponential backoff. Each time it
starts listening on a channel, the first time included, it calls that channel's
callbacks once: notifications sent before it listened were not heard, so work (or
events) may be waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import asyncpg

from backroom.store.postgres.database import CONNECTION_ERRORS, PostgresSettings

log = logging.getLogger("backroom.store.postgres.store")

Connect = Callable[[], Awaitable["asyncpg.Connection[asyncpg.Record]"]]
"""Opens a fresh connection to the database."""

_CANNOT_LISTEN: tuple[type[BaseException], ...] = (*CONNECTION_ERRORS, asyncpg.PostgresError)
"""Errors that leave the listener without a connection, to retry after a pause."""


@dataclass(frozen=True, slots=True)
class Backoff:
    """How long to wait between reconnection attempts: doubling from `first_ms` to `max_ms`."""

    first_ms: int = 100
    max_ms: int = 5_000

    def after(self, delay_ms: int) -> int:
        """The wait that follows a wait of `delay_ms`."""
        return min(self.max_ms, delay_ms * 2)


class ChannelListener:
    """Calls the callbacks registered for a channel, on the event loop, for each
    notification heard on it."""

    def __init__(self, connect: Connect, channel: str, backoff: Backoff | None = None) -> None:
        self._connect = connect
        self._channel = channel
        self._backoff = backoff or Backoff()
        self._callbacks: dict[str, list[Callable[[], None]]] = {}
        self._task: asyncio.Task[None] | None = None
        self._connection: asyncpg.Connection[asyncpg.Record] | None = None
        # The connection that listens on every channel registered so far, once it does.
        self._ready: asyncpg.Connection[asyncpg.Record] | None = None
        self._joining: set[asyncio.Task[None]] = set()
        # One statement at a time on the connection: a channel may be joined meanwhile.
        self._statement = asyncio.Lock()
        # `_changed` is set when the connection in use is lost or `close()` is called;
        # `_closed` only by `close()`, so that it can cut a backoff pause short.
        self._changed = asyncio.Event()
        self._closed = asyncio.Event()

    def add(self, callback: Callable[[], None], channel: str | None = None) -> None:
        """Register `callback` for `channel` (by default the new-work channel given at
        construction). The first registration starts listening, so it needs a running
        loop; a channel first registered later is joined on the connection in use."""
        name = channel or self._channel
        fresh = name not in self._callbacks
        self._callbacks.setdefault(name, []).append(callback)
        loop = asyncio.get_running_loop()
        if self._task is None:
            self._task = loop.create_task(self._listen(), name="backroom-postgres-listener")
        elif fresh and self._ready is not None:
            joining = loop.create_task(self._join(self._ready, name))
            self._joining.add(joining)
            joining.add_done_callback(self._joining.discard)
        # Otherwise the connection being opened listens on it with the rest.

    async def close(self) -> None:
        """Stop listening and close the connection."""
        self._closed.set()
        self._changed.set()
        if self._task is not None:
            await self._task
            self._task = None
        await asyncio.gather(*self._joining, return_exceptions=True)

    def _call_back(self, channel: str | None = None) -> None:
        # One call_soon each: a callback that raises is logged by the loop and does not
        # keep the others from running.
        loop = asyncio.get_running_loop()
        for name, callbacks in self._callbacks.items():
            if channel is None or name == channel:
                for callback in callbacks:
                    loop.call_soon(callback)

    def _heard(self, _connection: object, _pid: int, channel: str, _payload: object) -> None:
        self._call_back(channel)

    def _lost(self, connection: object) -> None:
        # Only the loss of the connection in use matters, not of one already given up.
        if connection is self._connection:
            self._changed.set()

    async def _listen(self) -> None:
        delay_ms = self._backoff.first_ms
        while not self._closed.is_set():
            connection = await self._open()
            if connection is None:
                await self._pause(delay_ms)
                delay_ms = self._backoff.after(delay_ms)
                continue
            delay_ms = self._backoff.first_ms
            self._call_back()
            await self._changed.wait()
            await self._shut(connection)
            if not self._closed.is_set():
                log.warning("lost the LISTEN connection on %s; reconnecting", self._names())

    async def _open(self) -> asyncpg.Connection[asyncpg.Record] | None:
        """A connection listening on every channel, or None if the server is unreachable."""
        self._changed.clear()
        try:
            connection = await self._connect()
        except _CANNOT_LISTEN as error:
            log.warning("cannot LISTEN on %s yet: %s", self._names(), error)
            return None
        self._connection = connection
        connection.add_termination_listener(self._lost)
        listening: set[str] = set()
        try:
            # A channel registered while this awaits is listened on too, before `_ready`.
            while missing := [name for name in self._callbacks if name not in listening]:
                for name in missing:
                    async with self._statement:
                        await connection.add_listener(name, self._heard)
                    listening.add(name)
        except _CANNOT_LISTEN as error:
            log.warning("cannot LISTEN on %s yet: %s", self._names(), error)
            await self._shut(connection)
            return None
        self._ready = connection
        return connection

    async def _join(self, connection: asyncpg.Connection[asyncpg.Record], channel: str) -> None:
        """Listen on `channel` too, on the connection that listens on the others."""
        try:
            async with self._statement:
                await connection.add_listener(channel, self._heard)
        except _CANNOT_LISTEN as error:
            if connection is self._connection and not self._closed.is_set():
                log.warning("cannot LISTEN on %s yet: %s", channel, error)
                self._changed.set()  # a new connection listens on every channel
            return
        self._call_back(channel)

    async def _shut(self, connection: asyncpg.Connection[asyncpg.Record]) -> None:
        """Close a connection that is no longer wanted (closing a lost one is a no-op)."""
        self._connection = self._ready = None
        connection.remove_termination_listener(self._lost)
        with contextlib.suppress(*CONNECTION_ERRORS):
            await connection.close(timeout=self._backoff.max_ms / 1000)

    def _names(self) -> str:
        return ", ".join(self._callbacks)

    async def _pause(self, delay_ms: int) -> None:
        """Wait `delay_ms` before reconnecting; `close()` cuts the wait short."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(delay_ms / 1000):
                await self._closed.wait()


class PollingOnly:
    """Stands in for the listener where LISTEN would lose every notification.

    Through a transaction pooler, LISTEN "succeeds" on a server session that soon serves
    other clients, and the notifications it should hear are lost: workers must poll.
    """

    def __init__(self) -> None:
        self._said = False

    def add(self, callback: Callable[[], None], channel: str | None = None) -> None:
        """Never call `callback`; say once (in the worker's start log) that nothing listens."""
        if not self._said:
            self._said = True
            log.warning(
                "pooler=transaction and no listen URL: not listening for new work; "
                "workers find it by polling (--poll-interval), set --listen-url for "
                "prompt pickups"
            )

    async def close(self) -> None:
        """Nothing to close."""


def channel_listener(connect: Connect, settings: PostgresSettings) -> ChannelListener | PollingOnly:
    """A listener (`settings.channel` by default), or `PollingOnly` where LISTEN cannot
    work."""
    if not settings.listens:
        return PollingOnly()
    return ChannelListener(connect, settings.channel)
