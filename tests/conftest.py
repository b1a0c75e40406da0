"""Set-up shared by every test directory: a PostgreSQL database for the session.

Tests that need PostgreSQL ask for `postgres_url`. Without a reachable server they
skip, unless BACKROOM_REQUIRE_POSTGRES=1 (as in CI), where they fail instead.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Callable, Iterator
from typing import NoReturn

import asyncpg
import pytest

POSTGRES_SERVER = "postgresql://postgres@127.0.0.1:5432"
# The database the session connects to while it creates and drops its own.
POSTGRES_ADMIN_URL = f"{POSTGRES_SERVER}/test"


def postgres_required() -> bool:
    """True when a missing PostgreSQL must fail the tests rather than skip them."""
    return os.environ.get("BACKROOM_REQUIRE_POSTGRES") == "1"


def skip_without_postgres(reason: str) -> NoReturn:
    """Skip the test for `reason`, or fail it when PostgreSQL is required."""
    if postgres_required():
        pytest.fail(f"{reason} (BACKROOM_REQUIRE_POSTGRES=1)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def missing_postgres() -> Callable[[str], NoReturn]:
    """`skip_without_postgres`, for tests that find a PostgreSQL piece missing."""
    return skip_without_postgres


async def _run_as_admin(statement: str) -> None:
    connection = await asyncpg.connect(POSTGRES_ADMIN_URL, timeout=5)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of a fresh PostgreSQL database for this session; dropped at its end."""
    name = f"backroom_test_{secrets.token_hex(6)}"
    try:
        asyncio.run(_run_as_admin(f'CREATE DATABASE "{name}"'))
    except (OSError, TimeoutError, asyncpg.PostgresError) as error:
        skip_without_postgres(f"PostgreSQL is not reachable at {POSTGRES_ADMIN_URL}: {error}")
    yield f"{POSTGRES_SERVER}/{name}"
    asyncio.run(_run_as_admin(f'DROP DATABASE "{name}" WITH (FORCE)'))
