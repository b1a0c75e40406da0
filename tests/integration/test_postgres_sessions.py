"""What only the PostgreSQL store does with its sessions: surviving terminated ones,
timing out idle transactions, knowing its array types from the start, and claims and
capped submissions spread over many.

Each test gets an empty schema, channel and application_name of its own (fixtures in
conftest.py), by which it finds and terminates its store's sessions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from postgres_store_support import T0, due_job, migrated, terminate_sessions

from backroom.core.errors import QueueFull, StoreUnavailable
from backroom.core.job import NewJob, SubmitResult
from backroom.store.postgres.array_types import ARRAY_OIDS, ARRAY_TYPES
from backroom.store.postgres.database import PostgresDatabase, PostgresSettings
from backroom.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres


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


async def test_a_new_session_runs_its_first_array_statement_without_a_type_lookup(
    settings: PostgresSettings,
) -> None:
    # Reversed and renamed, so that the statement is not one the pool prepared itself.
    columns = ", ".join(f"${n}::{name} AS c{n}" for n, name in enumerate(ARRAY_TYPES[::-1], 1))
    statement = f"SELECT {columns}"
    # The second database's session is handed the lookup the process made before.
    for _ in range(2):
        database = PostgresDatabase(settings)
        try:
            async with database.connection() as connection:
                ran: list[str] = []
                connection.add_query_logger(lambda query, ran=ran: ran.append(query.query))
                await connection.fetchrow(statement, *([] for _ in ARRAY_TYPES))
        finally:
            await database.close()
        # asyncpg's lookup of a type it has not seen would run its own queries first.
        assert ran == [statement]


async def test_the_array_types_oids_are_the_servers(settings: PostgresSettings) -> None:
    database = PostgresDatabase(settings)
    try:
        async with database.connection() as connection:
            found = [
                await connection.fetchval("SELECT $1::text::regtype::oid", name)
                for name in ARRAY_TYPES
            ]
    finally:
        await database.close()
    assert tuple(found) == ARRAY_OIDS


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
