"""backroom behind a real PgBouncer (Debian's package, its default configuration), in
session and in transaction pooling.

Each test gets a database of its own and a PgBouncer of its own (see the fixtures in
`conftest.py`).
"""

from __future__ import annotations

import asyncio
import json
from contextlib import AbstractAsyncContextManager
from functools import partial

import asyncpg
import pytest
from deadline_polls import until
from pgbouncer_process import PgBouncer, store_url

from backroom import App, JobState
from backroom.runtime.worker_config import WorkerConfig
from backroom.store.postgres import leases
from backroom.store.postgres.database import PooledConnection, PostgresDatabase, PostgresSettings
from backroom.store.postgres.url import Pooler
from backroom.store.postgres.wake_hint import WakeHint

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

CLAIM_ARGUMENTS = (0, 10, 30_000, "worker", "claimed", ["noop"])
"""now, limit, lease expiry, worker id, reason, tasks: a claim of every queue."""


async def test_two_apps_submit_and_run_jobs_through_pgbouncer(
    pgbouncer: PgBouncer, database: str
) -> None:
    url = store_url(pgbouncer, database, pool_max="3")
    first, second = App(url), App(url)
    for app in (first, second):
        app.task("noop")(_noop)
    async with first, second:
        # Both pools share PgBouncer's server sessions: a named prepared statement of one
        # would collide with (or be missing for) the other in transaction pooling.
        await asyncio.gather(*(app.submit("noop", n) for n in range(20) for app in (first, second)))
        await first.submit_many([first.new_job("noop", n) for n in range(100)])
        await asyncio.gather(
            first.worker(WorkerConfig(burst=True, concurrency=20)).run(),
            second.worker(WorkerConfig(burst=True, concurrency=20)).run(),
        )
        stats = await first.store.stats(first.clock.now())
    assert [(row.succeeded, row.queued, row.running, row.failed) for row in stats] == [
        (140, 0, 0, 0)
    ]


async def _noop(ctx: object, payload: object) -> None:
    """A task that does nothing."""


async def test_the_claim_is_planned_without_jit_through_pgbouncer(
    pgbouncer: PgBouncer, database: str, direct_url: str
) -> None:
    # Set up directly, so that PgBouncer's server sessions are as fresh as the server
    # makes them (jit on, its default) until the store under test uses them.
    async with App(direct_url) as app:
        await app.submit_many([app.new_job("noop", n) for n in range(2_000)])
    claim = "EXPLAIN (FORMAT JSON) " + leases.CLAIM.format(queue_order=leases.EVERY_QUEUE)
    url = store_url(pgbouncer, database)

    # The server's default (jit on) would compile the claim: its estimate is that large.
    plain = await asyncpg.connect(pgbouncer.url(database), statement_cache_size=0)
    try:
        assert "JIT" in json.loads(await plain.fetchval(claim, *CLAIM_ARGUMENTS))[0]
    finally:
        await plain.close()

    store_database = PostgresDatabase(PostgresSettings.from_url(url))
    try:
        for _ in range(3):  # whichever server session the pooler hands out
            async with store_database.with_settings() as connection:
                plan = json.loads(await connection.fetchval(claim, *CLAIM_ARGUMENTS))[0]
            assert "JIT" not in plan
    finally:
        await store_database.close()


async def test_the_store_claims_on_a_connection_with_the_settings_on(
    pgbouncer: PgBouncer, database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The test above shows such a connection plans the claim without JIT; this one that
    # the store's claim takes one.
    asked: list[Pooler] = []
    with_settings = PostgresDatabase.with_settings

    def spied(database: PostgresDatabase) -> AbstractAsyncContextManager[PooledConnection]:
        asked.append(database.settings.pooler)
        return with_settings(database)

    monkeypatch.setattr(PostgresDatabase, "with_settings", spied)
    async with App(store_url(pgbouncer, database)) as app:
        submitted = await app.submit("noop", None)
        claimed = await app.store.claim([], 5, "worker", 30_000, app.clock.now())
    assert ([job.id for job in claimed], asked) == ([submitted.job.id], [Pooler(pgbouncer.mode)])


async def test_transactions_abort_when_left_idle_through_pgbouncer(
    pgbouncer: PgBouncer, database: str
) -> None:
    settings = PostgresSettings.from_url(store_url(pgbouncer, database))
    store_database = PostgresDatabase(
        PostgresSettings(settings.dsn, pooler=settings.pooler, idle_in_transaction_timeout_ms=1234)
    )
    try:
        async with store_database.transaction() as connection:
            timeout = await connection.fetchval("SHOW idle_in_transaction_session_timeout")
    finally:
        await store_database.close()
    assert timeout == "1234ms"


# -- the new-work hint through a transaction pooler ------------------------------------

HINT_DEADLINE_S = 30.0
"""Generous: the worker polls only every 600 s, so a pickup within this was woken for."""


@pytest.mark.parametrize("pgbouncer", ["transaction"], indirect=True)
async def test_a_grouped_submission_through_pgbouncer_wakes_a_worker_by_its_hint(
    pgbouncer: PgBouncer, database: str, direct_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The submitter has no listen URL: its wake hint goes through PgBouncer in
    # transaction pooling, on a connection of its own. A job submitted alone is woken
    # for by its own statement's NOTIFY; jobs submitted together (a group) only by the
    # hint sent after the group commits. Each round submits a job that is not due
    # (alone, it notifies no one) with two due ones, so that every notification comes
    # from a hint, whichever way the three are grouped: a direct LISTEN of the test's
    # hears it, and the worker (LISTEN on the direct listen URL, everything else
    # through PgBouncer) picks the two up though it polls only every 600 s.
    hints: list[WakeHint] = []
    send = WakeHint.send

    def counted(hint: WakeHint) -> None:
        hints.append(hint)
        send(hint)

    monkeypatch.setattr(WakeHint, "send", counted)
    heard: asyncio.Queue[object] = asyncio.Queue()
    listening = await asyncpg.connect(direct_url)
    await listening.add_listener(CHANNEL, lambda *notification: heard.put_nowait(notification))
    submitter = App(store_url(pgbouncer, database))
    worker_app = App(store_url(pgbouncer, database, listen_url=direct_url))
    worker_app.task("noop")(_noop)
    try:
        async with submitter, worker_app:
            worker = worker_app.worker(WorkerConfig(poll_interval_ms=600_000))
            running = asyncio.create_task(worker.run())
            try:
                for _ in range(3):  # the first round may be taken by the worker's first claim
                    hinted = len(hints)
                    ids = await _submit_a_group(submitter)
                    await asyncio.wait_for(heard.get(), HINT_DEADLINE_S)
                    assert len(hints) > hinted
                    await until(partial(_succeeded, worker_app, ids), "a pickup", HINT_DEADLINE_S)
            finally:
                worker.stop()
                await running
    finally:
        await listening.close()


CHANNEL = PostgresSettings("").channel
"""The channel the stores notify on (their default)."""


async def _submit_a_group(app: App) -> list[int]:
    """A job due in an hour and two due now, submitted at once: the due ones' ids."""
    _later, *due = await asyncio.gather(
        app.submit("noop", "later", delay_s=3_600), app.submit("noop", 1), app.submit("noop", 2)
    )
    return [submitted.job.id for submitted in due]


async def _succeeded(app: App, ids: list[int]) -> bool:
    """Whether every job of `ids` has succeeded."""
    jobs = [await app.get(job_id) for job_id in ids]
    return all(job is not None and job.state is JobState.SUCCEEDED for job in jobs)
