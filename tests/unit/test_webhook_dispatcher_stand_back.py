"""Two webhook dispatchers on one feed: the one that lost a race keeps out of the way
while the other one moves the position, and every event is delivered once.

Each feed read here takes a millisecond of virtual time, so two dispatchers woken by
the same write read the same batch, as two worker processes on PostgreSQL do; one of
them finds the position moved and stands back. Coming back after `poll_ms` to read
again, it took a batch now and then under the other one's feet (issue 13: a read
thrown away each second, by one process or the other).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from backroom.clock import SimClock
from backroom.core.feed import FeedFilter, FeedPage, FeedPosition
from backroom.core.job import NewJob
from backroom.core.webhooks import NewDelivery, NewSubscription
from backroom.store.memory.store import MemoryStore
from backroom.store.memory.tables import MemoryTables
from backroom.webhooks.dispatcher import WebhookDispatcher

T0 = 1_700_000_000_000
EVERY_MS = 50
RUN_MS = 10_000
POLL_MS = 1_000


class Racing(MemoryStore):
    """A memory store whose feed reads take 1 ms; counts reads and moves lost."""

    def __init__(self, tables: MemoryTables, clock: SimClock) -> None:
        super().__init__(tables)
        self.clock = clock
        self.reads = 0
        self.lost = 0

    async def read_feed(self, after: FeedPosition, where: FeedFilter, limit: int) -> FeedPage:
        self.reads += 1
        page = await super().read_feed(after, where, limit)
        await self.clock.sleep(1)
        return page

    async def dispatch_deliveries(
        self,
        consumer: str,
        expected: FeedPosition,
        to: FeedPosition,
        deliveries: Sequence[NewDelivery],
        delivery_job: Callable[[int], NewJob],
        now: int,
    ) -> bool:
        moved = await super().dispatch_deliveries(
            consumer, expected, to, deliveries, delivery_job, now
        )
        self.lost += not moved
        return moved


def dispatchers(clock: SimClock) -> tuple[list[Racing], list[WebhookDispatcher]]:
    """Two stores on the same tables, and a dispatcher on each."""
    tables = MemoryTables()
    stores = [Racing(tables, clock) for _ in range(2)]
    made = [
        WebhookDispatcher(store, clock, lambda job_id: f"/v1/jobs/{job_id}") for store in stores
    ]
    return stores, made


async def produce(store: MemoryStore, clock: SimClock) -> list[int]:
    """A job of the subscribed tenant every EVERY_MS for RUN_MS; their ids."""
    ids = []
    for n in range(RUN_MS // EVERY_MS):
        new = NewJob(task="work", input=n, run_at=clock.now(), tenant="acme")
        ids.append((await store.submit(new, clock.now())).job.id)
        await clock.sleep(EVERY_MS)
    return ids


def test_the_loser_stands_back_while_the_winner_moves_and_each_event_goes_once() -> None:
    clock = SimClock(T0)
    stores, both = dispatchers(clock)

    async def main() -> tuple[list[int], list[int]]:
        subscription = NewSubscription("acme", "https://x.test/h", ("job.submitted",), "s")
        await stores[0].create_subscription(subscription, clock.now())
        await both[0].dispatch_once()  # the position starts at the head: before any job
        stopping = asyncio.Event()
        running = [asyncio.create_task(one.run(stopping, POLL_MS)) for one in both]
        ids = await produce(stores[0], clock)
        reads = [store.reads for store in stores]
        await clock.sleep(3 * POLL_MS)  # time for a stand-back to end and a last read
        stopping.set()
        await asyncio.gather(*running)
        return ids, reads

    ids, reads = clock.run(main())

    delivered = [
        [(item.event_type, item.job_id) for item in clock.run(stores[0].list_deliveries(job, None))]
        for job in ids
    ]
    assert delivered == [[("job.submitted", job)] for job in ids]
    # One race lost at the first write both heard; then one dispatcher reads alone
    # while the jobs come (the other read once more: the batch it lost).
    assert sum(store.lost for store in stores) == 1
    assert sorted(reads)[0] <= 2


def test_the_one_standing_back_takes_over_when_the_other_stops() -> None:
    clock = SimClock(T0)
    stores, both = dispatchers(clock)

    async def main() -> list[int]:
        subscription = NewSubscription("acme", "https://x.test/h", ("job.submitted",), "s")
        await stores[0].create_subscription(subscription, clock.now())
        await both[0].dispatch_once()
        first, second = asyncio.Event(), asyncio.Event()
        running = [both[0].run(first, POLL_MS), both[1].run(second, POLL_MS)]
        tasks = [asyncio.create_task(one) for one in running]
        ids = await produce(stores[0], clock)
        winner = 0 if stores[1].lost else 1
        (first, second)[winner].set()  # the one at work stops; more jobs come
        await tasks[winner]
        ids += await produce(stores[0], clock)
        await clock.sleep(3 * POLL_MS)
        first.set()
        second.set()
        await asyncio.gather(*tasks)
        return ids

    ids = clock.run(main())

    counts = [len(clock.run(stores[0].list_deliveries(job, None))) for job in ids]
    assert counts == [1] * len(ids)
