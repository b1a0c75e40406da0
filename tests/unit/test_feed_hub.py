"""The per-process feed hub: one reader fanned out to every stream, and a stream that
falls behind is cut off with a clear message rather than left to grow without end."""

from __future__ import annotations

import asyncio

import pytest

from backroom.clock import SystemClock
from backroom.core.feed import FeedFilter
from backroom.core.job import NewJob
from backroom.service.event_streams import StreamMessage, feed_stream
from backroom.service.feed_hub import FeedHub, StreamLagged
from backroom.store.memory.store import MemoryStore

T0 = 1_700_000_000_000
WAIT_S = 10.0


def job(n: int, task: str = "t") -> NewJob:
    return NewJob(task=task, input=n, run_at=T0)


async def test_every_stream_gets_the_events_its_filter_passes() -> None:
    store = MemoryStore()
    hub = FeedHub(lambda: store, SystemClock(), buffer=10)
    wanted = await hub.open(FeedFilter(tasks=("a",)))
    everything = await hub.open(FeedFilter())
    try:
        await store.submit(job(1, "a"), T0)
        await store.submit(job(2, "b"), T0)
        first = await asyncio.wait_for(anext(aiter(wanted.events())), WAIT_S)
        seen = [await asyncio.wait_for(anext(aiter(everything.events())), WAIT_S) for _ in "ab"]
    finally:
        await hub.close()

    assert first.task == "a"
    assert [event.task for event in seen] == ["a", "b"]


async def test_a_stream_that_falls_behind_is_told_so() -> None:
    store = MemoryStore()
    hub = FeedHub(lambda: store, SystemClock(), buffer=2)
    stream = await hub.open(FeedFilter())
    try:
        for n in range(5):
            await store.submit(job(n), T0)
        with pytest.raises(StreamLagged):
            async with asyncio.timeout(WAIT_S):
                async for _ in stream.events():
                    pass
    finally:
        await hub.close()
    assert stream.lagged


async def test_a_lagging_feed_stream_ends_with_an_error_event_naming_the_cure() -> None:
    store = MemoryStore()
    hub = FeedHub(lambda: store, SystemClock(), buffer=1)
    messages = feed_stream(store, hub, FeedFilter(), None)

    async def next_message() -> StreamMessage:
        return await anext(messages)

    first = asyncio.create_task(next_message())
    try:
        async with asyncio.timeout(WAIT_S):
            while hub.streams == 0:
                await asyncio.sleep(0.001)
        for n in range(5):  # no await in between: the hub reads all five at once
            await store.submit(job(n), T0)
        received = [await asyncio.wait_for(first, WAIT_S)]
        while received[-1].event != "error" and len(received) < 6:
            received.append(await asyncio.wait_for(anext(messages), WAIT_S))
    finally:
        await hub.close()

    message = received[-1]
    assert len(received) < 6  # cut off before all five were delivered
    assert message.event == "error"
    assert message.data["type"] == "stream.lagged"
    assert "Last-Event-ID" in str(message.data["detail"])
