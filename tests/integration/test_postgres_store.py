"""What only the PostgreSQL store does: LISTEN/NOTIFY wake-ups, surviving terminated
sessions, migrations raced by many processes, and claims and capped submissions spread
over many sessions.

Each test gets an empty schema of its own in the session's database (selected through
the URL's search_path), a NOTIFY channel of its own, and an application_name of its
own, by which it finds and terminates its store's sessions.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg
import pytest

from backroom.core.errors import QueueFull, StoreUnavailable
from backroom.core.job import ErrorInfo, NewJob, SubmitResult
from backroom.core.outcome import Failed, Released, RetryAt
from backroom.store.migrations import load_migrations
from backroom.store.postgres.database import PostgresDatabase, PostgresSettings
from backroom.store.postgres.store import PostgresStore
from backroom.store.protocol import RedriveFilter

pytestmark = pytest.mark.postgres

T0 = 1_700_000_000_000
MINUTE = 60_000
BOOM = ErrorInfo("RuntimeError", "boom")
WAIT_S = 10.0
"""The most any test waits for the server to deliver a notification or a connection."""


def due_job(run_at: int = T0) -> NewJob:
    """A job to submit at T0, due at `run_at`."""
    return NewJob(task="summarize", input={"doc": 1}, run_at=run_at)


@pytest.fixture
async def schema_url(postgres_url: str) -> AsyncIterator[str]:
    """The URL of an empty schema of this test's own; dropped afterwards."""
    name = f"backroom_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(postgres_url)
    try:
        await admin.execute(f'CREATE SCHEMA "{name}"')
        yield f"{postgres_url}?search_path={name}"
        await admin.execute(f'DROP SCHEMA "{name}" CASCADE')
    finally:
        await admin.close()


@pytest.fixture
async def settings(schema_url: str) -> PostgresSettings:
    """Settings for this test's stores: its schema, channel and application name."""
    tag = secrets.token_hex(4)
    return PostgresSettings(
        dsn=schema_url, channel=f"backroom_test_{tag}", application_name=f"backroom_test_{tag}"
    )


@pytest.fixture
async def open_store(settings: PostgresSettings) -> AsyncIterator[Callable[[], PostgresStore]]:
    """Opens stores on this test's schema (each its own pool); closes them afterwards."""
    opened: list[PostgresStore] = []

    def open_one() -> PostgresStore:
        store = PostgresStore(settings)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        await store.close()


async def migrated(store: PostgresStore) -> PostgresStore:
    """`store`, once its schema is migrated."""
    await store.migrate()
    return store


async def terminate_sessions(url: str, application_name: str) -> int:
    """Terminate every server session of `application_name`, as an operator would.

    Each termination is waited for (up to WAIT_S), so the sessions are gone on return.
    """
    admin = await asyncpg.connect(url)
    try:
        killed: int = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid, $2)) FROM pg_stat_activity "
            "WHERE application_name = $1",
            application_name,
            int(WAIT_S * 1000),
        )
    finally:
        await admin.close()
    return killed


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
    open_store: Callable[[], PostgresStore],
) -> None:
    listening = await migrated(open_store())
    submitting = await migrated(open_store())
    wakeups = Wakeups()
    listening.on_new_work(wakeups)
    await wakeups.next()  # called once when listening starts

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


# -- lost connections ----------------------------------------------------------------


async def test_a_killed_session_fails_calls_with_store_unavailable_until_the_pool_reconnects(
    open_store: Callable[[], PostgresStore], settings: PostgresSettings, schema_url: str
) -> None:
    store = await migrated(open_store())
    job = (await store.submit(due_job(), T0)).job
    await terminate_sessions(schema_url, settings.application_name)

    outcomes: list[str] = []
    while "ok" not in outcomes and len(outcomes) <= settings.max_connections:
        try:
            assert await store.get(job.id) == job
            outcomes.append("ok")
        except StoreUnavailable:
            outcomes.append("unavailable")
    assert outcomes[-1] == "ok"


async def test_a_session_killed_inside_a_transaction_raises_store_unavailable(
    settings: PostgresSettings, schema_url: str
) -> None:
    database = PostgresDatabase(settings)
    try:
        with pytest.raises(StoreUnavailable):
            async with database.connection() as connection, connection.transaction():
                await terminate_sessions(schema_url, settings.application_name)
                await connection.fetchval("SELECT 1")
        async with database.connection() as connection:
            assert await connection.fetchval("SELECT 1") == 1
    finally:
        await database.close()


async def test_an_unreachable_server_raises_store_unavailable() -> None:
    # Port 1 on localhost refuses connections at once.
    store = PostgresStore.from_url("postgresql://postgres@127.0.0.1:1/backroom")
    with pytest.raises(StoreUnavailable):
        await store.get(1)
    await store.close()


async def test_sessions_time_out_idle_transactions_after_the_configured_delay(
    schema_url: str,
) -> None:
    database = PostgresDatabase(
        PostgresSettings(dsn=schema_url, idle_in_transaction_timeout_ms=1234)
    )
    try:
        async with database.connection() as connection:
            timeout = await connection.fetchval("SHOW idle_in_transaction_session_timeout")
    finally:
        await database.close()
    assert timeout == "1234ms"


# -- claims across sessions ----------------------------------------------------------


async def test_claimers_on_separate_sessions_never_take_the_same_job(
    open_store: Callable[[], PostgresStore],
) -> None:
    stores = [await migrated(open_store()) for _ in range(4)]
    await stores[0].submit_many([due_job() for _ in range(400)], T0)

    async def claim_until_empty(store: PostgresStore, worker: str) -> list[int]:
        taken: list[int] = []
        while jobs := await store.claim([], 15, worker, 30_000, T0):
            taken.extend(job.id for job in jobs)
        return taken

    claims = await asyncio.gather(
        *(claim_until_empty(store, f"worker-{n}") for n, store in enumerate(stores))
    )
    taken = [job_id for worker_claims in claims for job_id in worker_claims]
    assert len(taken) == len(set(taken)) == 400


async def test_submitters_on_separate_sessions_never_exceed_a_tenants_cap(
    open_store: Callable[[], PostgresStore],
) -> None:
    stores = [await migrated(open_store()) for _ in range(4)]
    capped = NewJob(task="summarize", input={"doc": 1}, run_at=T0, tenant="capped", max_active=3)

    outcomes = await asyncio.gather(
        *(stores[n % 4].submit(capped, T0) for n in range(20)), return_exceptions=True
    )

    assert sum(isinstance(outcome, SubmitResult) for outcome in outcomes) == 3
    assert all(isinstance(outcome, SubmitResult | QueueFull) for outcome in outcomes)
    assert await stores[0].count_active("capped") == 3
