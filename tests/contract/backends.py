"""The registry of backends every contract test runs on: add a backend here, once.

Each entry says where a test's database lives (`locate`, synchronous, so that the
session's PostgreSQL database is made outside any event loop) and how to open stores
on it (`opener`, which may empty a shared database first). Every contract test runs
once per entry, unchanged; no backend may skip a test.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest

from backroom.store.memory import MemoryStore, MemoryTables
from backroom.store.postgres.store import PostgresStore
from backroom.store.protocol import Store
from backroom.store.sqlite.store import SqliteStore

StoreFactory = Callable[[], Store]
"""Opens another (unmigrated) store on the test's database."""


@dataclass(frozen=True, slots=True)
class ContractBackend:
    """One backend of the contract suite."""

    name: str
    locate: Callable[[pytest.FixtureRequest, Path], str]
    """Where one test's database lives (a file, a URL, or nothing)."""
    opener: Callable[[str], Awaitable[StoreFactory]]
    """The factory of stores on the database at that location, made ready for a test."""
    marks: tuple[pytest.MarkDecorator, ...] = ()


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


async def _sqlite(location: str) -> StoreFactory:
    """A fresh file per test."""
    return lambda: SqliteStore(location)


async def _postgres(url: str) -> StoreFactory:
    """The session's database, migrated, with every table emptied."""
    store = PostgresStore.from_url(url)
    try:
        # The schema must exist before it can be emptied.
        await store.migrate()
    finally:
        await store.close()
    await reset_postgres(url)
    return lambda: PostgresStore.from_url(url)


async def _memory(_: str) -> StoreFactory:
    """Fresh tables, shared by every store the test opens, as a file is."""
    tables = MemoryTables()
    return lambda: MemoryStore(tables)


BACKENDS = (
    ContractBackend("sqlite", lambda _, tmp_path: str(tmp_path / "contract.db"), _sqlite),
    ContractBackend(
        "postgres",
        lambda request, _: str(request.getfixturevalue("postgres_url")),
        _postgres,
        marks=(pytest.mark.postgres,),
    ),
    ContractBackend("memory", lambda _, __: "", _memory),
)
"""Every backend the contract suite runs on."""
