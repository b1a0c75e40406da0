"""What only the PostgreSQL store does with attempt rows: it writes each once, when the
attempt ends (the running attempt is read from its job's row), and a lease sweep still
ends an attempt a previous release stored at its claim while a rollout goes on."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import pytest
from postgres_schemas import scratch_schema
from postgres_store_support import MINUTE, T0, due_job, migrated

from backroom.core.job import AttemptOutcome
from backroom.core.outcome import Succeeded
from backroom.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

STORED = "SELECT count(*) FROM attempts"

PREVIOUS_CLAIM = """
INSERT INTO attempts (job_id, number, lease_token, worker_id, started_at, lane)
SELECT id, attempt, lease_token, worker_id, started_at, lane FROM jobs WHERE id = $1
"""
"""The attempt row the previous release's claim inserted."""


@pytest.fixture
def schema_url(postgres_url: str) -> Iterator[str]:
    with scratch_schema(postgres_url) as url:
        yield url


@pytest.fixture
async def store(schema_url: str) -> AsyncIterator[PostgresStore]:
    opened = await migrated(PostgresStore.from_url(schema_url))
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def connection(schema_url: str) -> AsyncIterator[asyncpg.Connection[Any]]:
    database, schema = schema_url.split("?search_path=")
    opened = await asyncpg.connect(database)
    await opened.execute(f'SET search_path = "{schema}"')
    try:
        yield opened
    finally:
        await opened.close()


async def test_an_attempt_row_is_written_once_at_its_end(
    store: PostgresStore, connection: asyncpg.Connection[Any]
) -> None:
    await store.submit(due_job(), T0)
    (job,) = await store.claim([], 1, "worker", MINUTE, T0)
    assert await connection.fetchval(STORED) == 0
    assert len(await store.attempts(job.id)) == 1

    assert await store.finish([(job.lease, Succeeded(1))], T0 + 1) == [True]

    assert await connection.fetchval(STORED) == 1
    (attempt,) = await store.attempts(job.id)
    assert (attempt.worker_id, attempt.outcome) == ("worker", AttemptOutcome.SUCCEEDED)


async def test_a_sweep_ends_an_attempt_the_previous_release_stored_at_its_claim(
    store: PostgresStore, connection: asyncpg.Connection[Any]
) -> None:
    await store.submit(due_job(), T0)
    (job,) = await store.claim([], 1, "worker", MINUTE, T0)
    await connection.execute(PREVIOUS_CLAIM, job.id)

    (swept,) = await store.expire_leases(T0 + MINUTE)

    assert swept.id == job.id
    (attempt,) = await store.attempts(job.id)
    assert (attempt.outcome, attempt.finished_at) == (AttemptOutcome.LEASE_EXPIRED, T0 + MINUTE)
