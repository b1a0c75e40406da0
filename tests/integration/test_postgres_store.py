"""What only the PostgreSQL store does: migrations raced by many processes, and
LISTEN/NOTIFY wake-ups (lost sessions and many sessions: test_postgres_sessions.py).

Each test gets an empty schema of its own in the session's database (selected through
the URL's search_path), a NOTIFY channel of its own, and an application_name of its
own, by which it finds and terminates its store's sessions (fixtures in conftest.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg
import pytest
from postgres_store_support import (
    BOOM,
    MINUTE,
    T0,
    WAIT_S,
    due_job,
    listening_sessions,
    migrated,
    terminate_sessions,
)

from backroom.core.outcome import Failed, Released, RetryAt
from backroom.store.migrations import load_migrations
from backroom.store.postgres.database import PostgresSettings
from backroom.store.postgres.store import PostgresStore
from backroom.store.protocol import RedriveFilter

pytestmark = pytest.mark.postgres


class Wakeups:
    """A new-work callback that a test can wait for."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def __call__(self) -> None:
        self._event.set()

    async def next(self) -> None:
        """Wait for a callback that came after the previous `next()` returned."""
        async with asyncio.timeout(WAIT_S):
            await self._event.wait()
        self._event.clear()


async def until_listening(url: str, application_name: str) -> None:
    """Poll the server until a session of `application_name` has run its LISTEN and gone
    idle after it (so the LISTEN is committed, in force), whatever the load. Fails after
    WAIT_S."""
    admin = await asyncpg.connect(url)
    try:
        async with asyncio.timeout(WAIT_S):
            while not await admin.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 "
                "AND state = 'idle' AND query LIKE 'LISTEN %'",
                application_name,
            ):
                await asyncio.sleep(0.05)  # a real server's session: poll it, up to WAIT_S
    finally:
        await admin.close()


class Hints:
    """Listens on the test's channel on a connection of its own, to count hints."""

    def __init__(self, connection: asyncpg.Connection, channel: str) -> None:
        self._connection = connection
        self._channel = channel
        self._heard: asyncio.Queue[str] = asyncio.Queue()

    async def listen(self) -> None:
        """Start listening (done when this returns)."""
        await self._connection.add_listener(
            self._channel, lambda *notification: self._heard.put_nowait(notification[3])
        )

    async def sent_by(self, write: Callable[[], Awaitable[object]]) -> list[str]:
        """The payloads of the notifications that `write` sent."""
        await write()
        # Notifications arrive in commit order, so all of the write's precede this one.
        await self._connection.execute(f"NOTIFY {self._channel}, 'marker'")
        payloads: list[str] = []
        async with asyncio.timeout(WAIT_S):
            while (payload := await self._heard.get()) != "marker":
                payloads.append(payload)
        return payloads


@pytest.fixture
async def hints(schema_url: str, settings: PostgresSettings) -> AsyncIterator[Hints]:
    """A listener on this test's channel."""
    connection = await asyncpg.connect(schema_url)
    recorder = Hints(connection, settings.channel)
    await recorder.listen()
    yield recorder
    await connection.close()


# -- migrations ----------------------------------------------------------------------


async def test_processes_migrating_at_once_apply_each_version_once(
    open_store: Callable[[], PostgresStore], schema_url: str
) -> None:
    stores = [open_store() for _ in range(6)]
    await asyncio.gather(*(store.migrate() for store in stores))
    await stores[0].migrate()

    admin = await asyncpg.connect(schema_url)
    try:
        versions = [
            row["version"]
            for row in await admin.fetch("SELECT version FROM schema_version ORDER BY version")
        ]
    finally:
        await admin.close()
    assert versions == [migration.version for migration in load_migrations("postgres")]


# -- wake-ups ------------------------------------------------------------------------


async def test_a_submission_through_another_store_wakes_a_listening_store(
    open_store: Callable[[], PostgresStore], schema_url: str, settings: PostgresSettings
) -> None:
    listening = await migrated(open_store())
    submitting = await migrated(open_store())
    wakeups = Wakeups()
    listening.on_new_work(wakeups)
    await wakeups.next()  # called once when listening starts
    await until_listening(schema_url, settings.application_name)

    await submitting.submit(due_job(), T0)

    await wakeups.next()


async def test_a_submission_hints_only_when_the_job_is_due(
    open_store: Callable[[], PostgresStore], hints: Hints
) -> None:
    store = await migrated(open_store())

    assert await hints.sent_by(lambda: store.submit(due_job(run_at=T0 + MINUTE), T0)) == []
    assert await hints.sent_by(lambda: store.submit(due_job(), T0)) == [""]
    assert await hints.sent_by(lambda: store.submit_many([due_job()] * 3, T0)) == [""]


async def test_an_attempt_hints_when_it_ends_with_its_job_due_again(
    open_store: Callable[[], PostgresStore], hints: Hints
) -> None:
    store = await migrated(open_store())
    assert await hints.sent_by(lambda: store.submit_many([due_job()] * 3, T0)) == [""]
    retried, released, failed = await store.claim([], 3, "worker", MINUTE, T0)

    assert (
        await hints.sent_by(lambda: store.finish([(retried.lease, RetryAt(T0 + MINUTE, BOOM))], T0))
        == []
    )
    assert await hints.sent_by(lambda: store.finish([(failed.lease, Failed(BOOM))], T0)) == []
    assert await hints.sent_by(lambda: store.finish([(released.lease, Released())], T0)) == [""]
    assert await hints.sent_by(lambda: store.redrive(RedriveFilter(), T0)) == [""]


async def test_a_claim_is_silent_and_an_expired_lease_hints(
    open_store: Callable[[], PostgresStore], hints: Hints
) -> None:
    store = await migrated(open_store())
    assert await hints.sent_by(lambda: store.submit(due_job(), T0)) == [""]

    assert await hints.sent_by(lambda: store.claim([], 1, "worker", MINUTE, T0)) == []
    assert await hints.sent_by(lambda: store.expire_leases(T0 + MINUTE)) == [""]


async def test_the_listener_reconnects_and_calls_back_after_its_session_is_killed(
    open_store: Callable[[], PostgresStore], settings: PostgresSettings, schema_url: str
) -> None:
    listening = await migrated(open_store())
    submitting = await migrated(open_store())
    wakeups = Wakeups()
    listening.on_new_work(wakeups)
    await wakeups.next()

    assert await terminate_sessions(schema_url, settings.application_name) >= 1

    await wakeups.next()  # listening again: work queued meanwhile may be waiting
    await submitting.submit(due_job(), T0)
    await wakeups.next()


async def test_new_work_and_the_feed_share_one_listen_connection_through_a_reconnect(
    open_store: Callable[[], PostgresStore], settings: PostgresSettings, schema_url: str
) -> None:
    listening = await migrated(open_store())
    submitting = await migrated(open_store())
    work, events = Wakeups(), Wakeups()
    listening.on_new_work(work)
    await work.next()
    listening.on_feed_change(events)  # joins the connection that listens already
    await events.next()

    assert await listening_sessions(schema_url, settings.application_name) == 1
    await submitting.submit(due_job(), T0)  # its statement notifies both channels
    await work.next()
    await events.next()

    assert await terminate_sessions(schema_url, settings.application_name) >= 1

    await work.next()  # listening again on both: what came meanwhile may be waiting
    await events.next()
    await submitting.submit(due_job(), T0)
    await work.next()
    await events.next()
    assert await listening_sessions(schema_url, settings.application_name) == 1


# -- the hint after a group of submissions -------------------------------------------


class Senders:
    """The server process of every notification on a channel, heard on a connection of
    the test's own (outside the store's sessions, so it outlives their termination)."""

    def __init__(self, connection: asyncpg.Connection) -> None:
        self._connection = connection
        self._pids: asyncio.Queue[int] = asyncio.Queue()

    @classmethod
    async def listening(cls, url: str, channel: str) -> Senders:
        """Listening on `channel` when this returns."""
        senders = cls(await asyncpg.connect(url))
        await senders._connection.add_listener(
            channel, lambda *notification: senders._pids.put_nowait(notification[1])
        )
        return senders

    async def next(self) -> tuple[int, str]:
        """The next notifying session: its pid, and the last statement it ran."""
        async with asyncio.timeout(WAIT_S):
            pid = await self._pids.get()
        query: str = await self._connection.fetchval(
            "SELECT query FROM pg_stat_activity WHERE pid = $1", pid
        )
        return pid, query

    async def close(self) -> None:
        """Stop listening."""
        await self._connection.close()


async def submit_group(store: PostgresStore, size: int) -> None:
    """Submit `size` due jobs at once: stored as one group (see `store.submit_group`)."""
    results = await asyncio.gather(*(store.submit(due_job(), T0) for _ in range(size)))
    assert len({result.job.id for result in results}) == size


async def test_a_group_of_submissions_commits_silently_and_then_wakes_the_workers(
    open_store: Callable[[], PostgresStore], schema_url: str, settings: PostgresSettings
) -> None:
    store = await migrated(open_store())
    senders = await Senders.listening(schema_url, settings.channel)
    try:
        await submit_group(store, 3)
        # Not the group's statement: a session whose last statement was the hint alone.
        _, query = await senders.next()
        assert query == "SELECT pg_notify($1, '')"
    finally:
        await senders.close()


async def test_the_wake_hint_reconnects_after_its_session_is_killed(
    open_store: Callable[[], PostgresStore], schema_url: str, settings: PostgresSettings
) -> None:
    store = await migrated(open_store())
    senders = await Senders.listening(schema_url, settings.channel)
    try:
        await submit_group(store, 2)
        first, _ = await senders.next()

        assert await terminate_sessions(schema_url, settings.application_name) >= 1

        await submit_group(store, 2)
        again, query = await senders.next()
        assert again != first
        assert query == "SELECT pg_notify($1, '')"
    finally:
        await senders.close()
