"""A worker that finds nothing to claim asks `next_wakeup`, which reads the earliest
job of each (queue, task, lane) in `jobs_wakeup`, never the backlog.

It once read every queued job of the worker's queues (100,000 queued: 25-40 ms on
PostgreSQL, 6-15 ms on SQLite) on each wake of an idle worker. Each test queues
QUEUED jobs of a task the worker lacks, due now, and a few of its own task, due later,
and counts what the statement reads: on PostgreSQL the rows each plan node read
(EXPLAIN ANALYZE of the generic plan, tables never analyzed); on SQLite its virtual
machine's steps, against the same statement beside an empty backlog.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
from postgres_schemas import scratch_schema
from postgres_store_support import T0, migrated
from test_postgres_plans import rows_read

from backroom.core.job import DEFAULT_QUEUE, DEFAULT_TENANT
from backroom.store.postgres import queries
from backroom.store.postgres.store import PostgresStore
from backroom.store.sqlite import queries as sqlite_queries
from backroom.store.sqlite.store import SqliteStore

QUEUED = 30_000
LATER = T0 + 60_000
"""When the worker's own jobs are due."""

FILL = """
INSERT INTO jobs (tenant, task, queue, state, input, max_attempts, run_at, created_at, updated_at)
SELECT $1, $2, $3, 'queued', '"x"', 3, $4, $4, $4 FROM generate_series(1, $5)
"""

ASKED = [([DEFAULT_QUEUE], ["mine"]), ([], ["mine"]), ([], None), ([DEFAULT_QUEUE], None)]
"""(queues, tasks) a worker asks with: its own, or every queue and task."""


@pytest.fixture
def schema_url(postgres_url: str) -> Iterator[str]:
    with scratch_schema(postgres_url) as url:
        yield url


@pytest.fixture
async def backlog(schema_url: str) -> AsyncIterator[asyncpg.Connection[asyncpg.Record]]:
    """QUEUED jobs of another task due now and 3 of the worker's due LATER, never analyzed."""
    store = await migrated(PostgresStore.from_url(schema_url))
    await store.close()
    database, schema = schema_url.split("?search_path=")
    connection = await asyncpg.connect(database)
    await connection.execute(f'SET search_path = "{schema}"')
    try:
        await connection.execute(FILL, DEFAULT_TENANT, "other", DEFAULT_QUEUE, T0, QUEUED)
        await connection.execute(FILL, DEFAULT_TENANT, "mine", DEFAULT_QUEUE, LATER, 3)
        yield connection
    finally:
        await connection.close()


@pytest.mark.postgres
@pytest.mark.parametrize(("queues", "tasks"), ASKED)
async def test_next_wakeup_seeks_each_queue_task_and_lane_on_postgres(
    backlog: asyncpg.Connection[asyncpg.Record], queues: list[str], tasks: list[str] | None
) -> None:
    read = await rows_read(backlog, queries.NEXT_WAKEUP, queues or None, tasks)
    wakeup = await backlog.fetchval(queries.NEXT_WAKEUP, queues or None, tasks)

    assert wakeup == (LATER if tasks else T0)
    assert read["jobs"] <= 10


def _sqlite_steps(path: Path, queues: list[str], tasks: list[str] | None) -> tuple[int, int | None]:
    """The virtual machine steps (in thousands) of one `next_wakeup`, and its answer."""
    steps = 0

    def step() -> int:
        nonlocal steps
        steps += 1
        return 0

    connection = sqlite3.connect(path)
    try:
        connection.set_progress_handler(step, 1_000)
        wakeup = sqlite_queries.next_wakeup(connection, queues, tasks)
    finally:
        connection.close()
    return steps, wakeup


async def _sqlite_backlog(path: Path, other: int) -> None:
    store = SqliteStore.from_url(f"sqlite:///{path}")
    await store.migrate()
    await store.close()
    connection = sqlite3.connect(path)
    try:
        for task, run_at, count in (("other", T0, other), ("mine", LATER, 3)):
            connection.executemany(
                "INSERT INTO jobs (tenant, task, queue, state, input, max_attempts, run_at,"
                " created_at, updated_at) VALUES (?, ?, ?, 'queued', ?, 3, ?, ?, ?)",
                [(DEFAULT_TENANT, task, DEFAULT_QUEUE, json.dumps("x"), run_at, T0, T0)] * count,
            )
        connection.commit()
    finally:
        connection.close()


@pytest.mark.parametrize(("queues", "tasks"), ASKED)
async def test_next_wakeup_seeks_each_queue_task_and_lane_on_sqlite(
    tmp_path: Path, queues: list[str], tasks: list[str] | None
) -> None:
    await _sqlite_backlog(tmp_path / "empty.db", 0)
    await _sqlite_backlog(tmp_path / "full.db", QUEUED)

    beside_none, _ = _sqlite_steps(tmp_path / "empty.db", queues, tasks)
    beside_many, wakeup = _sqlite_steps(tmp_path / "full.db", queues, tasks)

    assert wakeup == (LATER if tasks else T0)
    # A read of the backlog takes some 10 steps a job: 300 thousand or more.
    assert beside_many <= beside_none + 5
