"""The PostgreSQL event feed: a late-committing writer is never skipped, and every
process's writes wake readers through LISTEN/NOTIFY."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import asyncpg
import pytest

from backroom.core.feed import START, FeedFilter
from backroom.core.job import NewJob
from backroom.core.outcome import Succeeded
from backroom.store.postgres import feed
from backroom.store.postgres.database import PostgresDatabase, PostgresSettings
from backroom.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

T0 = 1_700_000_000_000
WAIT_S = 10.0


@pytest.fixture
async def schema_url(postgres_url: str) -> AsyncIterator[str]:
    name = f"backroom_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(postgres_url)
    try:
        await admin.execute(f'CREATE SCHEMA "{name}"')
        yield f"{postgres_url}?search_path={name}"
        await admin.execute(f'DROP SCHEMA "{name}" CASCADE')
    finally:
        await admin.close()


@pytest.fixture
async def store(schema_url: str) -> AsyncIterator[PostgresStore]:
    opened = PostgresStore.from_url(schema_url)
    await opened.migrate()
    try:
        yield opened
    finally:
        await opened.close()


async def writer(schema_url: str) -> asyncpg.Connection[asyncpg.Record]:
    schema = schema_url.rsplit("search_path=", 1)[1]
    connection = await asyncpg.connect(schema_url.split("?", maxsplit=1)[0])
    await connection.execute(f'SET search_path = "{schema}"')
    return connection


async def submitted(store: PostgresStore, count: int) -> list[int]:
    results = await store.submit_many(
        [NewJob(task="t", input=n, run_at=T0) for n in range(count)], T0
    )
    return [result.job.id for result in results]


async def caught_up(store: PostgresStore, count: int) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while True:
        page = await store.read_feed(START, FeedFilter(), 10_000)
        if len(page.events) >= count:
            return
        assert loop.time() < deadline
        await asyncio.sleep(0.01)


async def test_an_event_that_commits_late_is_read_before_the_ones_after_it(
    store: PostgresStore, schema_url: str
) -> None:
    first_job, second_job = await submitted(store, 2)
    await caught_up(store, 2)
    start = await store.feed_head()
    slow, fast = await writer(schema_url), await writer(schema_url)
    try:
        late = slow.transaction()
        await late.start()
        slow_id = await slow.fetchval(
            "INSERT INTO job_events (job_id, at, to_state, reason) "
            "VALUES ($1, $2, 'queued', 'slow') RETURNING id",
            first_job,
            T0,
        )
        fast_id = await fast.fetchval(
            "INSERT INTO job_events (job_id, at, to_state, reason) "
            "VALUES ($1, $2, 'queued', 'fast') RETURNING id",
            second_job,
            T0,
        )
        assert fast_id > slow_id

        while_open = await store.read_feed(start, FeedFilter(), 100)
        await late.commit()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT_S
        after = await store.read_feed(start, FeedFilter(), 100)
        while len(after.events) < 2:
            assert loop.time() < deadline
            await asyncio.sleep(0.01)
            after = await store.read_feed(start, FeedFilter(), 100)
    finally:
        await slow.close()
        await fast.close()

    # A reader that had taken the committed `fast` event would have moved past `slow`.
    assert [event.reason for event in while_open.events] == []
    assert while_open.position == start
    assert [event.reason for event in after.events] == ["slow", "fast"]


async def test_another_process_writes_wake_feed_readers(
    store: PostgresStore, schema_url: str
) -> None:
    woken = asyncio.Event()
    store.on_feed_change(woken.set)
    await asyncio.wait_for(woken.wait(), WAIT_S)  # listening has started
    woken.clear()
    other = PostgresStore.from_url(schema_url)
    try:
        await submitted(other, 1)
        await asyncio.wait_for(woken.wait(), WAIT_S)
    finally:
        await other.close()


async def test_claims_and_finishes_wake_feed_readers_after_their_commit(
    store: PostgresStore, schema_url: str
) -> None:
    # Their statements commit without NOTIFY (its lock is server-wide); the store that
    # wrote them sends the hint once they have committed (postgres/feed_hint.py).
    other = PostgresStore.from_url(schema_url)
    try:
        await submitted(other, 1)
        woken = asyncio.Event()
        store.on_feed_change(woken.set)
        await asyncio.wait_for(woken.wait(), WAIT_S)  # listening has started
        woken.clear()
        (job,) = await other.claim([], 1, "w", 60_000, T0)
        await asyncio.wait_for(woken.wait(), WAIT_S)
        woken.clear()
        assert job.lease is not None
        assert await other.finish([(job.lease, Succeeded("done"))], T0 + 1) == [True]
        await asyncio.wait_for(woken.wait(), WAIT_S)
    finally:
        await other.close()


async def test_a_move_past_events_that_called_for_nothing_does_not_wait_for_the_disk(
    store: PostgresStore, schema_url: str
) -> None:
    # Only its own transaction commits asynchronously (feed.py, _MOVE_CURSOR_LAZILY).
    start = await store.feed_consumer("webhooks", T0)
    await submitted(store, 1)
    await caught_up(store, 1)
    head = await store.feed_head()
    database = PostgresDatabase(PostgresSettings(schema_url, max_connections=1))
    try:
        async with database.transaction() as connection:
            assert await feed.move_consumer(connection, "webhooks", start, head, T0, lazily=True)
            assert await connection.fetchval("SHOW synchronous_commit") == "off"
        async with database.transaction() as connection:
            assert await connection.fetchval("SHOW synchronous_commit") == "on"
            assert await feed.move_consumer(connection, "webhooks", head, start, T0)
            assert await connection.fetchval("SHOW synchronous_commit") == "on"
    finally:
        await database.close()
    assert await store.feed_consumer("webhooks", T0) == start
