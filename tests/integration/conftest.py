"""Fixtures of the integration tests: a fresh database on each backend, and for the
tests behind a real PgBouncer (`pgbouncer_process`), a database and a PgBouncer of their own.

Behind PgBouncer each test gets a database of its own (a pooler passes no
`search_path`) and a PgBouncer in front of the local PostgreSQL, started and stopped
by the test. With BACKROOM_REQUIRE_POSTGRES=1 a missing pgbouncer binary fails the tests.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from pgbouncer_process import PGBOUNCER, PgBouncer, run_pgbouncer
from postgres_schemas import run_statement, scratch_schema


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
