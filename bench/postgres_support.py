"""What the PostgreSQL benchmarks share: scratch databases, one-off statements, timing."""

from __future__ import annotations

import contextlib
import secrets
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from pathlib import Path

import asyncpg

ROOT = Path(__file__).resolve().parent.parent
BULK = 1_000
"""Jobs per call when enqueuing in bulk."""


# -- scratch databases ------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    """The PostgreSQL server under test, and the database to connect to for admin work."""

    url: str
    admin_db: str

    def database(self, name: str) -> str:
        return f"{self.url}/{name}"

    @contextlib.asynccontextmanager
    async def scratch(self, prefix: str) -> AsyncIterator[str]:
        """A new empty database; its URL; dropped afterwards."""
        name = f"{prefix}_{secrets.token_hex(4)}"
        admin = await asyncpg.connect(self.database(self.admin_db))
        try:
            await admin.execute(f'CREATE DATABASE "{name}"')
            yield self.database(name)
        finally:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await admin.close()


async def execute(url: str, *statements: str) -> None:
    """Run statements on a connection of their own."""
    connection = await asyncpg.connect(url)
    try:
        for statement in statements:
            await connection.execute(statement)
    finally:
        await connection.close()


async def fetch_one(url: str, query: str) -> asyncpg.Record:
    connection = await asyncpg.connect(url)
    try:
        row = await connection.fetchrow(query)
    finally:
        await connection.close()
    assert row is not None
    return row


async def timed(work: Awaitable[object]) -> float:
    """Seconds `work` takes."""
    started = time.perf_counter()
    await work
    return time.perf_counter() - started


def run_process(command: list[str]) -> float:
    """Wall seconds from starting `command` to its successful exit."""
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True)
    return time.perf_counter() - started
