"""`ctx.once` on PostgreSQL when the server drops the worker's sessions mid-write.

A restart (here: every session of the worker terminated by the server, as a restart
or failover does; the shared server itself is not restarted) that lands exactly on
the write recording an effect's end must cost time, never the job: the write is
fenced by the lease, so it is retried across the reconnect.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
from postgres_schemas import scratch_schema

from backroom import App, JobContext, JobState, WorkerConfig
from backroom.core.job import JSON, Lease
from backroom.store.postgres.database import PostgresSettings
from backroom.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

DEADLINE_S = 30.0

WAITING_ON_THE_ROW = """
SELECT pid FROM pg_stat_activity
WHERE application_name = $1 AND wait_event_type = 'Lock' AND query LIKE '%once_records%'
"""
"""The worker's session blocked in the closing write, behind the test's row lock."""

TERMINATE_THE_WORKERS_SESSIONS = """
SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity WHERE application_name = $1
"""


@pytest.fixture
def db_url(postgres_url: str) -> Iterator[str]:
    """A PostgreSQL schema of this test's own."""
    with scratch_schema(postgres_url) as url:
        yield url


class RestartDuringClosingWrite(PostgresStore):
    """A store whose first `once_end` is caught mid-statement by a server-side kill.

    The test holds the `once` row locked, so the closing write is surely in flight on
    the server when every session of this store is terminated; then it lets go.
    """

    def __init__(self, settings: PostgresSettings) -> None:
        super().__init__(settings)
        self.test_settings = settings
        self.terminated = 0

    async def once_end(self, lease: Lease, name: str, result: JSON, now: int) -> None:
        if self.terminated:
            return await super().once_end(lease, name, result, now)
        ours = self.test_settings.application_name
        admin = await asyncpg.connect(
            self.test_settings.dsn, server_settings={"application_name": "test-admin"}
        )
        try:
            async with admin.transaction():
                await admin.execute(
                    "SELECT FROM once_records WHERE job_id = $1 AND name = $2 FOR UPDATE",
                    lease.job_id,
                    name,
                )
                write = asyncio.ensure_future(super().once_end(lease, name, result, now))
                await blocked_session(admin, ours, write)
                self.terminated = await admin.fetchval(TERMINATE_THE_WORKERS_SESSIONS, ours)
        finally:
            await admin.close()
        await write


async def blocked_session(
    admin: asyncpg.Connection[Any], application_name: str, write: asyncio.Future[None]
) -> int:
    """The pid of our session waiting on the test's row lock, polled with a deadline."""
    async with asyncio.timeout(DEADLINE_S):
        while True:
            pid: int | None = await admin.fetchval(WAITING_ON_THE_ROW, application_name)
            if pid is not None:
                return pid
            if write.done():
                raise AssertionError(f"the closing write did not wait: {write!r}")
            await asyncio.sleep(0.01)


async def test_a_restart_during_the_closing_write_costs_time_not_the_job(db_url: str) -> None:
    name = f"backroom_test_{secrets.token_hex(4)}"
    store = RestartDuringClosingWrite(
        PostgresSettings(dsn=db_url, application_name=name, channel=name)
    )
    app = App(store=store)
    charges: list[int] = []

    @app.task("charge")
    async def charge(ctx: JobContext, amount: int) -> str:
        async def effect() -> str:
            charges.append(amount)
            return f"ch_{len(charges)}"

        return str(await ctx.once("charge-card", effect))

    async with app:
        job = (await app.submit("charge", 42)).job
        async with asyncio.timeout(DEADLINE_S):
            await app.worker(WorkerConfig(burst=True)).run()
        done = await app.get(job.id)

    assert store.terminated >= 1
    assert done is not None
    assert (done.state, done.attempt, done.result) == (JobState.SUCCEEDED, 1, "ch_1")
    assert charges == [42]
