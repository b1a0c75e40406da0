"""A woken webhook dispatcher reads the feed `SETTLE_MS` after the hint, once for every
hint that came meanwhile (issue 13: its reads ran beside the claim of the job whose
submission woke it), and at once again only after a batch that stopped at its limit
(issue 13: on a busy feed it read whatever little had come, without a pause)."""

from __future__ import annotations

import asyncio

from backroom.clock import SimClock
from backroom.core.feed import DELIVERABLE_SCAN, FeedFilter, FeedPage, FeedPosition
from backroom.core.job import NewJob
from backroom.store.memory.store import MemoryStore
from backroom.webhooks.dispatcher import SETTLE_MS, WebhookDispatcher

T0 = 1_700_000_000_000


class Reads(MemoryStore):
    """A memory store that notes the time of every feed read; each takes `read_ms`."""

    def __init__(self, clock: SimClock, read_ms: int = 0) -> None:
        super().__init__()
        self.clock = clock
        self.read_ms = read_ms
        self.at: list[int] = []

    async def read_feed(self, after: FeedPosition, where: FeedFilter, limit: int) -> FeedPage:
        self.at.append(self.clock.now())
        page = await super().read_feed(after, where, limit)
        await self.clock.sleep(self.read_ms)
        return page


def job(n: int, at: int) -> NewJob:
    """A job of a tenant with no subscription and no URL: an event no one is sent."""
    return NewJob(task="work", input=n, run_at=at, tenant="acme")


def test_hints_are_read_once_settle_ms_after_the_first() -> None:
    clock = SimClock(T0)
    store = Reads(clock)
    dispatcher = WebhookDispatcher(store, clock, lambda job_id: f"/v1/jobs/{job_id}")

    async def main() -> None:
        stopping = asyncio.Event()
        running = asyncio.create_task(dispatcher.run(stopping, poll_ms=60_000))
        await clock.sleep(1_000)
        dispatcher.wake()
        await clock.sleep(SETTLE_MS // 2)
        dispatcher.wake()
        await clock.sleep(1_000)
        stopping.set()
        await running

    clock.run(main())

    assert store.at == [T0, T0 + 1_000 + SETTLE_MS]


def test_a_busy_feed_is_read_once_a_settle_not_after_every_write() -> None:
    clock = SimClock(T0)
    store = Reads(clock, read_ms=1)
    dispatcher = WebhookDispatcher(store, clock, lambda job_id: f"/v1/jobs/{job_id}")

    async def main() -> None:
        stopping = asyncio.Event()
        running = asyncio.create_task(dispatcher.run(stopping, poll_ms=60_000))
        for n in range(1_000):  # a write each millisecond for a second
            await store.submit(job(n, clock.now()), clock.now())
            await clock.sleep(1)
        stopping.set()
        await running

    clock.run(main())

    # A read each time a settle and a read have passed, not one each millisecond.
    assert len(store.at) <= 1_000 // (SETTLE_MS + 1) + 2


def test_a_batch_that_stopped_at_its_limit_is_followed_at_once() -> None:
    clock = SimClock(T0)
    store = Reads(clock, read_ms=1)
    dispatcher = WebhookDispatcher(store, clock, lambda job_id: f"/v1/jobs/{job_id}", batch=1)

    async def main() -> None:
        await dispatcher.dispatch_once()  # the position starts at the head
        # Submitted, none deliverable: scans of DELIVERABLE_SCAN, DELIVERABLE_SCAN and 2.
        for n in range(2 * DELIVERABLE_SCAN + 2):
            await store.submit(job(n, clock.now()), clock.now())
        start = clock.now()
        stopping = asyncio.Event()
        running = asyncio.create_task(dispatcher.run(stopping, poll_ms=60_000))
        await clock.sleep(1_000)
        stopping.set()
        await running
        assert store.at[1:] == [start, start + 1, start + 2]

    clock.run(main())
