"""Contract: the event feed, its filters, durable readers and webhook dispatch."""

from __future__ import annotations

import asyncio

from contract_support import LEASE_MS, T0, WORKER, Backend, running, submit

from backroom.core.feed import START, FeedFilter, FeedPosition
from backroom.core.job import JobState, NewJob
from backroom.core.outcome import Succeeded
from backroom.core.webhooks import NewDelivery
from backroom.store.protocol import JobFilter, Store

SETTLE_S = 30.0


async def settled(store: Store) -> None:
    """Wait until the whole feed shows every stored event.

    On PostgreSQL the feed shows only transactions older than every one still open on
    the server, and other sessions (other test runs) may hold one open for a moment.
    """
    jobs = await store.list_jobs(JobFilter(limit=1_000))
    expected = sum([len(await store.events(job.id)) for job in jobs])
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_S
    while len((await store.read_feed(START, FeedFilter(), 10_000)).events) < expected:
        assert loop.time() < deadline, "the feed never showed every event"
        await asyncio.sleep(0.01)


def deliveries_job(delivery_id: int) -> NewJob:
    return NewJob(
        task="webhooks.deliver",
        input={"delivery_id": delivery_id},
        run_at=T0,
        tenant="_webhooks",
        queue="webhooks",
        idempotency_key=f"delivery-{delivery_id}",
    )


def delivery(event_id: int, subscription_id: int = 7, kind: str = "job.succeeded") -> NewDelivery:
    return NewDelivery("acme", 1, subscription_id, event_id, kind, "https://x.test/h", "{}")


async def test_the_feed_holds_every_transition_in_order_with_its_job(store: Store) -> None:
    job = await running(store, T0, tenant="acme", task="translate", queue="batch")
    await store.finish([(job.lease, Succeeded({"ok": True}))], T0 + 5)
    await settled(store)

    page = await store.read_feed(START, FeedFilter(), 100)

    assert [event.type for event in page.events] == [
        "job.submitted",
        "job.started",
        "job.succeeded",
    ]
    assert {(event.job_id, event.tenant, event.task, event.queue) for event in page.events} == {
        (job.id, "acme", "translate", "batch")
    }
    positions = [event.position for event in page.events]
    assert positions == sorted(positions)
    assert page.position == positions[-1]
    assert page.events[-1].at == T0 + 5


async def test_a_reader_resumes_after_its_position_and_misses_nothing(store: Store) -> None:
    for n in range(5):
        await submit(store, T0 + n)
    await settled(store)
    first = await store.read_feed(START, FeedFilter(), 2)
    rest = await store.read_feed(first.position, FeedFilter(), 100)
    after_all = await store.read_feed(rest.position, FeedFilter(), 100)

    assert len(first.events) == 2
    assert len(rest.events) == 3
    assert after_all.events == []
    assert after_all.position == rest.position


async def test_filters_keep_only_what_was_asked_and_still_move_the_reader(store: Store) -> None:
    mine = await submit(store, T0, tenant="acme", task="a", queue="interactive")
    await submit(store, T0, tenant="other", task="a", queue="interactive")
    await submit(store, T0, tenant="acme", task="b", queue="batch")
    await settled(store)

    by_tenant = await store.read_feed(START, FeedFilter(tenant="other"), 100)
    by_task = await store.read_feed(START, FeedFilter(tenant="acme", tasks=("a",)), 100)
    by_queue = await store.read_feed(START, FeedFilter(queues=("batch",)), 100)
    by_job = await store.read_feed(START, FeedFilter(job_id=mine.id), 100)
    by_type = await store.read_feed(START, FeedFilter(types=("job.succeeded",)), 100)

    assert [event.tenant for event in by_tenant.events] == ["other"]
    assert [event.job_id for event in by_task.events] == [mine.id]
    assert [event.task for event in by_queue.events] == ["b"]
    assert [event.job_id for event in by_job.events] == [mine.id]
    assert by_type.events == []
    assert by_type.position == (await store.feed_head())


async def test_the_head_is_the_newest_event(store: Store) -> None:
    assert await store.feed_head() == START
    await submit(store, T0)
    await settled(store)
    page = await store.read_feed(START, FeedFilter(), 10)
    assert await store.feed_head() == page.position


async def test_a_new_durable_reader_starts_at_the_head(store: Store) -> None:
    await submit(store, T0)
    await settled(store)
    head = await store.feed_head()

    assert await store.feed_consumer("webhooks", T0) == head
    await submit(store, T0 + 1)
    assert await store.feed_consumer("webhooks", T0 + 2) == head


async def test_dispatch_moves_the_reader_and_stores_deliveries_once(store: Store) -> None:
    await submit(store, T0, tenant="acme")
    start = await store.feed_consumer("webhooks", T0)
    await submit(store, T0 + 1, tenant="acme")
    await settled(store)
    page = await store.read_feed(start, FeedFilter(), 10)
    event_id = page.events[0].position.event_id

    moved = await store.dispatch_deliveries(
        "webhooks", start, page.position, [delivery(event_id)], deliveries_job, T0 + 2
    )
    stale = await store.dispatch_deliveries(
        "webhooks", start, page.position, [delivery(event_id, 8)], deliveries_job, T0 + 3
    )
    again = await store.dispatch_deliveries(
        "webhooks", page.position, page.position, [delivery(event_id)], deliveries_job, T0 + 4
    )

    assert moved and not stale and again
    assert await store.feed_consumer("webhooks", T0 + 5) == page.position
    stored = await store.list_deliveries(1, None)
    assert [(item.subscription_id, item.event_id) for item in stored] == [(7, event_id)]
    (job,) = await store.claim(["webhooks"], 10, WORKER, LEASE_MS, T0 + 5)
    assert job.input == {"delivery_id": stored[0].id}
    assert stored[0].delivery_job_id == job.id
    assert job.tenant == "_webhooks"


async def test_one_event_may_go_to_one_receiver_under_two_types(store: Store) -> None:
    start = await store.feed_consumer("webhooks", T0)
    both = [delivery(5, kind="job.failed"), delivery(5, kind="job.dead_lettered")]

    assert await store.dispatch_deliveries(
        "webhooks", start, FeedPosition(start.commit, start.event_id + 1), both, deliveries_job, T0
    )
    assert sorted(item.event_type for item in await store.list_deliveries(1, None)) == [
        "job.dead_lettered",
        "job.failed",
    ]


async def test_two_dispatchers_racing_commit_one_batch(backend: Backend) -> None:
    first, second = await backend.open(), await backend.open()
    start = await first.feed_consumer("webhooks", T0)
    to = FeedPosition(start.commit, start.event_id + 1)

    results = await asyncio.gather(
        first.dispatch_deliveries("webhooks", start, to, [delivery(9)], deliveries_job, T0),
        second.dispatch_deliveries("webhooks", start, to, [delivery(9, 8)], deliveries_job, T0),
    )

    assert sorted(results) == [False, True]
    assert len(await first.list_deliveries(1, None)) == 1


async def test_retention_keeps_what_a_durable_reader_has_not_read(store: Store) -> None:
    await store.feed_consumer("webhooks", T0)
    job = await running(store, T0)
    await store.finish([(job.lease, Succeeded(None))], T0 + 1)
    await settled(store)
    old = T0 + 10 * 86_400_000

    kept = await store.prune(old, [JobState.SUCCEEDED], 100)
    start = await store.feed_consumer("webhooks", T0)
    page = await store.read_feed(start, FeedFilter(), 100)
    await store.dispatch_deliveries("webhooks", start, page.position, [], deliveries_job, T0 + 2)
    pruned = await store.prune(old, [JobState.SUCCEEDED], 100)

    assert (kept, pruned) == (0, 1)
    assert await store.get(job.id) is None


async def test_progress_is_a_feed_event_but_not_a_transition(store: Store) -> None:
    job = await running(store, T0)

    assert await store.set_progress(job.lease, 0.5, "half", T0 + 1)
    page = await store.read_feed(START, FeedFilter(job_id=job.id), 100)

    assert [event.type for event in page.events] == ["job.submitted", "job.started", "job.progress"]
    assert [event.to_state for event in await store.events(job.id)] == ["queued", "running"]


async def test_an_event_says_whether_its_job_has_a_webhook_url(store: Store) -> None:
    hooked = await submit(store, T0, tenant="acme", webhook_url="https://x.test/hook")
    plain = await submit(store, T0, tenant="acme")
    await settled(store)

    page = await store.read_feed(START, FeedFilter(), 100)

    assert {event.job_id: event.webhook for event in page.events} == {
        hooked.id: True,
        plain.id: False,
    }


async def test_a_deliverable_read_keeps_what_a_webhook_may_be_sent_for(store: Store) -> None:
    subscribed = await running(store, T0, tenant="acme")
    await store.finish([(subscribed.lease, Succeeded(None))], T0 + 1)
    hooked = await running(store, T0, tenant="beta", webhook_url="https://x.test/hook")
    await store.finish([(hooked.lease, Succeeded(None))], T0 + 1)
    plain = await running(store, T0, tenant="beta")
    await store.finish([(plain.lease, Succeeded(None))], T0 + 1)
    await settled(store)
    everything = await store.read_feed(START, FeedFilter(), 100)

    page = await store.read_feed(START, FeedFilter(deliverable=("acme",)), 100)

    assert [(event.job_id, event.type) for event in page.events] == [
        (subscribed.id, "job.submitted"),
        (subscribed.id, "job.started"),
        (subscribed.id, "job.succeeded"),
        (hooked.id, "job.succeeded"),
    ]
    assert page.position == everything.position  # past the events left out too


async def test_a_page_says_whether_it_stopped_at_its_limit(store: Store) -> None:
    for n in range(3):  # three events
        await submit(store, T0 + n, tenant="beta")
    await settled(store)

    pages = [await store.read_feed(START, FeedFilter(), limit) for limit in (2, 3, 4)]

    assert [page.full for page in pages] == [True, True, False]
    rest = await store.read_feed(pages[0].position, FeedFilter(), 2)
    assert not rest.full and len(rest.events) == 1 and rest.position == pages[1].position
