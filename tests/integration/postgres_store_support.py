"""What the tests of the PostgreSQL store share: a due job, a migrated store, and
terminating a store's sessions as an operator would."""

from __future__ import annotations

import asyncpg

from backroom.core.job import ErrorInfo, NewJob
from backroom.store.postgres.store import PostgresStore

T0 = 1_700_000_000_000
MINUTE = 60_000
BOOM = ErrorInfo("RuntimeError", "boom")
WAIT_S = 10.0
"""The most any test waits for the server to deliver a notification or a connection."""


def due_job(run_at: int = T0) -> NewJob:
    """A job to submit at T0, due at `run_at`."""
    return NewJob(task="summarize", input={"doc": 1}, run_at=run_at)


async def migrated(store: PostgresStore) -> PostgresStore:
    """`store`, once its schema is migrated."""
    await store.migrate()
    return store


async def admin_count(url: str, query: str, *arguments: object) -> int:
    """The count `query` returns, on a connection of the test's own."""
    admin = await asyncpg.connect(url)
    try:
        counted: int = await admin.fetchval(query, *arguments)
    finally:
        await admin.close()
    return counted


async def terminate_sessions(url: str, application_name: str) -> int:
    """Terminate every server session of `application_name`, as an operator would.

    Each termination is waited for (up to WAIT_S), so the sessions are gone on return.
    """
    return await admin_count(
        url,
        "SELECT count(pg_terminate_backend(pid, $2)) FROM pg_stat_activity "
        "WHERE application_name = $1",
        application_name,
        int(WAIT_S * 1000),
    )


async def listening_sessions(url: str, application_name: str) -> int:
    """How many server sessions of `application_name` last ran a LISTEN."""
    return await admin_count(
        url,
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE application_name = $1 AND query LIKE 'LISTEN %'",
        application_name,
    )
