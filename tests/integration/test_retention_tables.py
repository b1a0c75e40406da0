"""Pruning leaves no row behind: every table that names a job by `job_id` is cleared.

The store's API cannot show `ctx.once` records of a deleted job, so this reads the
tables themselves, on each backend.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from backroom.core.job import JobState, NewJob
from backroom.core.outcome import Succeeded
from backroom.store import open_store
from backroom.store.protocol import Store

T0 = 1_700_000_000_000
JOB_TABLES = ("jobs", "attempts", "job_events", "once_records")


async def job_rows_per_table(url: str) -> dict[str, int]:
    """How many rows each job table holds."""
    counts = {}
    if url.startswith("sqlite:"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as connection:
            for table in JOB_TABLES:
                (counts[table],) = connection.execute(f"SELECT count(*) FROM {table}").fetchone()
        return counts
    postgres = await asyncpg.connect(url)
    try:
        for table in JOB_TABLES:
            counts[table] = await postgres.fetchval(f"SELECT count(*) FROM {table}")
    finally:
        await postgres.close()
    return counts


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A SQLite file, then a schema of this test's own in the session's PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'tables.db'}"
        return
    database: str = request.getfixturevalue("postgres_url")
    admin = await asyncpg.connect(database)
    try:
        await admin.execute("CREATE SCHEMA retention_tables")
        yield f"{database}?search_path=retention_tables"
        await admin.execute("DROP SCHEMA retention_tables CASCADE")
    finally:
        await admin.close()


@pytest.fixture
async def store(url: str) -> AsyncIterator[Store]:
    opened = open_store(url)
    await opened.migrate()
    yield opened
    await opened.close()


async def test_a_pruned_job_leaves_no_row_in_any_table(store: Store, url: str) -> None:
    await store.submit(NewJob("noop", None, T0), T0)
    (job,) = await store.claim([], 1, "worker", 60_000, T0)
    assert await store.once_begin(job.lease, "charge", T0) is None
    await store.once_end(job.lease, "charge", {"charged": True}, T0)
    await store.finish([(job.lease, Succeeded(1))], T0)
    assert all(count > 0 for count in (await job_rows_per_table(url)).values())

    assert await store.prune(T0 + 1, [JobState.SUCCEEDED], limit=10) == 1

    assert await job_rows_per_table(url) == dict.fromkeys(JOB_TABLES, 0)
