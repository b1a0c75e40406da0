"""A PostgreSQL schema of a test's own, in the session's database, dropped afterwards.

The store's URL selects the schema through `search_path`, so every process and pool
that a test starts on that URL sees only the test's tables.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg


async def run_statement(url: str, statement: str) -> None:
    """Run one statement on a connection of its own."""
    connection = await asyncpg.connect(url, timeout=10)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


@contextmanager
def scratch_schema(database_url: str) -> Iterator[str]:
    """Create an empty schema in `database_url`; yield a URL that selects it; drop it."""
    name = f"backroom_{secrets.token_hex(4)}"
    asyncio.run(run_statement(database_url, f'CREATE SCHEMA "{name}"'))
    try:
        yield f"{database_url}?search_path={name}"
    finally:
        asyncio.run(run_statement(database_url, f'DROP SCHEMA "{name}" CASCADE'))
