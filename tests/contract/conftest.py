"""The `store` fixture: every contract test runs once per backend, unchanged.

SQLite gets a fresh file per test, memory fresh tables (shared by every store the test
opens, as a file is). PostgreSQL gets one database per session (see
`postgres_url` in tests/conftest.py), migrated, with every table but schema_version
emptied before each test. No backend may skip a test; the PostgreSQL runs skip only
when the server is unreachable, and fail then too under BACKROOM_REQUIRE_POSTGRES=1.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import NoReturn

import asyncpg
import pytest
from contract_support import Backend

from backroom.store.memory import MemoryStore, MemoryTables
from backroom.store.protocol import Store
from backroom.store.sqlite.store import SqliteStore


async def reset_postgres(url: str) -> None:
    """Empty every table of the migrated schema but schema_version.

    DELETE rather than TRUNCATE: on a few rows it is hundreds of times faster.
    """
    connection = await asyncpg.connect(url)
    try:
        tables = await connection.fetch(
            "SELECT quote_ident(tablename) AS name FROM pg_tables "
            "WHERE schemaname = current_schema() AND tablename <> 'schema_version'"
        )
        async with connection.transaction():
            # Every table is emptied, so foreign keys need not be checked row by row.
            await connection.execute("SET LOCAL session_replication_role = replica")
            for table in tables:
                await connection.execute(f"DELETE FROM {table['name']}")
    finally:
        await connection.close()


def postgres_store_class(missing_postgres: Callable[[str], NoReturn]) -> Callable[[str], Store]:
    """`PostgresStore.from_url`, or a skip (a failure in CI) while it does not exist."""
    try:
        module = importlib.import_module("backroom.store.postgres.store")
    except ImportError as error:
        missing_postgres(f"the PostgreSQL store is not importable: {error}")
    from_url: Callable[[str], Store] = module.PostgresStore.from_url
    return from_url


@pytest.fixture(params=["sqlite", "postgres", "memory"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """(backend name, database location) for one contract test, on each backend in turn.

    Synchronous, so that the session's PostgreSQL database is made outside any event loop.
    """
    if request.param == "sqlite":
        return "sqlite", str(tmp_path / "contract.db")
    if request.param == "memory":
        return "memory", ""
    return "postgres", request.getfixturevalue("postgres_url")


@pytest.fixture
async def backend(
    database: tuple[str, str], missing_postgres: Callable[[str], NoReturn]
) -> AsyncIterator[Backend]:
    """Opens stores on the test's database; a PostgreSQL one is emptied first."""
    name, location = database
    if name == "sqlite":
        chosen = Backend(lambda: SqliteStore(location))
    elif name == "memory":
        tables = MemoryTables()
        chosen = Backend(lambda: MemoryStore(tables))
    else:
        from_url = postgres_store_class(missing_postgres)
        chosen = Backend(lambda: from_url(location))
        # The schema must exist before it can be emptied.
        await chosen.open()
        await reset_postgres(location)
    try:
        yield chosen
    finally:
        await chosen.close_all()


@pytest.fixture
async def store(backend: Backend) -> Store:
    """A migrated, empty store."""
    return await backend.open()
