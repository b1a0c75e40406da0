"""Set-up shared by every test directory: a PostgreSQL database for the session, and
the marker rules.

Tests that need PostgreSQL ask for `postgres_url`. Without a reachable server they
skip, unless BACKROOM_REQUIRE_POSTGRES=1 (as in CI), where they fail instead.

Markers (CONTRIBUTING.md, "Tests"): a test that asks for `postgres_url`, directly or
through a fixture, must carry `postgres`, or the run stops at collection (or the test
errs, when a fixture asks for it by `request.getfixturevalue`); a test that
starts a process must carry `slow`, or starting it fails the test. So `make check`
(`-m "not slow"`) never waits on a process, and `-m "not postgres"` runs without a
server.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import subprocess
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Stop the run when a test on PostgreSQL lacks the `postgres` marker."""
    unmarked = [
        item.nodeid
        for item in items
        if "postgres_url" in getattr(item, "fixturenames", ())
        and item.get_closest_marker("postgres") is None
    ]
    if unmarked:
        listed = "\n  ".join(unmarked)
        raise pytest.UsageError(f"tests on PostgreSQL without the postgres marker:\n  {listed}")


class _ProcessRefused:
    """Stands in for `subprocess.Popen` (which asyncio's subprocesses use too)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("this test starts a process: mark it @pytest.mark.slow")

    def __class_getitem__(cls, item: object) -> type[_ProcessRefused]:
        return cls


@pytest.fixture(autouse=True)
def _processes_only_in_slow_tests(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Starting a process (subprocess, asyncio) fails a test not marked `slow`."""
    if request.node.get_closest_marker("slow") is None:
        monkeypatch.setattr(subprocess, "Popen", _ProcessRefused)


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """Undo what an in-process `backroom worker` or `serve` did to logging.

    Those commands set up the process's logging (a stderr handler, backroom's level),
    which would otherwise carry on into every later test of the session.
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    own = {name: logging.getLogger(name).level for name in ("backroom", "uvicorn")}
    yield
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
    root.setLevel(level)
    for name, own_level in own.items():
        logging.getLogger(name).setLevel(own_level)


@pytest.fixture(autouse=True)
def _postgres_tests_are_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that reached `postgres_url` at run time (`getfixturevalue`) is marked too."""
    yield
    if (
        "postgres_url" in request.fixturenames
        and request.node.get_closest_marker("postgres") is None
    ):
        pytest.fail("this test runs on PostgreSQL: mark it @pytest.mark.postgres")
