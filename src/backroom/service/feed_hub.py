"""One reader of the event feed per server process, fanned out to every open stream.

A thousand clients following a thousand jobs must not mean a thousand queries at every
change: the hub reads the feed once per wake-up (a store notification, or a short poll
for writes made by other processes) and hands each event to the streams whose filter it
passes. Each stream has a bounded buffer; a client that falls that far behind is cut off
with `StreamLagged` and resumes from its last event id, reading the store directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

from backroom.clock import Clock, sleep_unless
from backroom.core.errors import StoreError
from backroom.core.feed import FeedEvent, FeedFilter
from backroom.store.protocol import ServiceStore

log = logging.getLogger("backroom.service.feed_hub")


class StreamLagged(Exception):
    """A stream's client fell too far behind the feed; it should resume from its last id."""


class FeedStream:
    """The events one stream wants, as the hub reads them."""

    def __init__(self, where: FeedFilter, buffer: int) -> None:
        self.where = where
        self._events: asyncio.Queue[FeedEvent | None] = asyncio.Queue(buffer)
        self.lagged = False

    def offer(self, event: FeedEvent) -> None:
        """Take `event` if it passes the filter; past the buffer, mark the stream lagged."""
        if self.lagged or not self.where.matches(event):
            return
        try:
            self._events.put_nowait(event)
        except asyncio.QueueFull:
            self.lagged = True
            self._events = asyncio.Queue(1)
            self._events.put_nowait(None)

    async def events(self) -> AsyncIterator[FeedEvent]:
        """The events as they come; raises `StreamLagged` when the buffer overflowed."""
        while True:
            event = await self._events.get()
            if event is None:
                raise StreamLagged("the stream fell behind the event feed")
            yield event


class FeedHub:
    """Reads the feed for every stream of this process; starts with the first stream.

    `store` gives the store when the first stream opens (an app opens its store after
    its routes are built).
    """

    def __init__(
        self,
        store: Callable[[], ServiceStore],
        clock: Clock,
        *,
        poll_ms: int = 250,
        buffer: int = 1_000,
    ) -> None:
        self._store = store
        self._clock = clock
        self._poll_ms = poll_ms
        self._buffer = buffer
        self._streams: set[FeedStream] = set()
        self._woken = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None

    async def open(self, where: FeedFilter) -> FeedStream:
        """A stream of the events that come from now on and pass `where`."""
        stream = FeedStream(where, self._buffer)
        self._streams.add(stream)
        if self._task is None:
            self._ready = asyncio.get_running_loop().create_future()
            self._store().on_feed_change(self._woken.set)
            self._task = asyncio.create_task(self._follow(), name="backroom-feed-hub")
        assert self._ready is not None
        await asyncio.shield(self._ready)
        return stream

    def close_stream(self, stream: FeedStream) -> None:
        """Stop handing events to `stream`."""
        self._streams.discard(stream)

    @property
    def streams(self) -> int:
        """How many streams are open."""
        return len(self._streams)

    async def close(self) -> None:
        """Stop reading the feed."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _follow(self) -> None:
        assert self._ready is not None
        position = await self._store().feed_head()
        self._ready.set_result(None)
        while True:
            self._woken.clear()
            try:
                page = await self._store().read_feed(position, FeedFilter(), 1_000)
            except StoreError as error:
                log.warning("cannot read the event feed: %s", error)
                page = None
            if page is not None and page.position != position:
                for event in page.events:
                    for stream in list(self._streams):
                        stream.offer(event)
                position = page.position
                continue
            await sleep_unless(self._clock, self._poll_ms, self._woken)
