"""A woken webhook dispatcher reads the feed `SETTLE_MS` after the hint, once for every
hint that came meanwhile (issue 13: its reads ran beside the claim of the job whose
submission woke it)."""

from __future__ import annotations

import asyncio

from backroom.clock import SimClock
from backroom.core.feed import FeedFilter, FeedPage, FeedPosition
from backroom.store.memory.store import MemoryStore
from backroom.webhooks.dispatcher import SETTLE_MS, WebhookDispatcher

T0 = 1_700_000_000_000


class Reads(MemoryStore):
    """A memory store that notes the time of every feed read."""

    def __init__(self, clock: SimClock) -> None:
        super().__init__()
        self.clock = clock
        self.at: list[int] = []

    async def read_feed(self, after: FeedPosition, where: FeedFilter, limit: int) -> FeedPage:
        self.at.append(self.clock.now())
        return await super().read_feed(after, where, limit)


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
