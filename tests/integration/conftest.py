"""Fixtures of the integration tests: a fresh database on each backend; for the tests of
the PostgreSQL store, a schema, channel and application name of their own; and for the
tests behind a real PgBouncer (`pgbouncer_process`), a database and a PgBouncer of their own.

Behind PgBouncer each test gets a database of its own (a pooler passes no
`search_path`) and a PgBouncer in front of the local PostgreSQL, started and stopped
by the test. With BACKROOM_REQUIRE_POSTGRES=1 a missing pgbouncer binary fails the tests.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import NoReturn

import asyncpg
import pytest
from pgbouncer_process import PGBOUNCER, PgBouncer, run_pgbouncer
from postgres_schemas import run_statement, scratch_schema

from backroom.store.postgres.database import PostgresSettings
from backroom.store.postgres.store import PostgresStore


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database on each backend (PostgreSQL: a schema of the test's own)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'backend.db'}"
        return
    with scratch_schema(request.getfixturevalue("postgres_url")) as url:
        yield url


@pytest.fixture
def direct_url(postgres_url: str) -> Iterator[str]:
    """The direct URL of an empty database of this test's own; dropped afterwards."""
    server = postgres_url.rsplit("/", 1)[0]
    name = f"backroom_pgbouncer_{secrets.token_hex(4)}"
    asyncio.run(run_statement(postgres_url, f'CREATE DATABASE "{name}"'))
    yield f"{server}/{name}"
    asyncio.run(run_statement(postgres_url, f'DROP DATABASE "{name}" WITH (FORCE)'))


@pytest.fixture
def database(direct_url: str) -> str:
    """The name of the test's database."""
    return direct_url.rsplit("/", 1)[1]


@pytest.fixture(params=["session", "transaction"])
def pgbouncer(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    postgres_url: str,
    database: str,
    missing_postgres: Callable[[str], NoReturn],
) -> Iterator[PgBouncer]:
    """A PgBouncer in session, then in transaction pooling, in front of the test's database."""
    if not PGBOUNCER.exists():
        missing_postgres(f"PgBouncer is not installed at {PGBOUNCER} (apt-get install pgbouncer)")
    with run_pgbouncer(tmp_path, postgres_url, database, request.param) as bouncer:
        yield bouncer


# -- the PostgreSQL store's own tests (test_postgres_store.py, test_postgres_sessions.py)


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
