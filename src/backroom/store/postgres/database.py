"""The PostgreSQL connection pool, its error mapping, and migrations under an advisory lock.

The pool is opened on first use, so a store can be built outside an event loop and a
server that is down at start-up only fails the calls made while it is down. Losing a
connection never crashes a caller: the operation raises `StoreUnavailable` and the pool
opens a fresh connection for the next one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TypeAlias

import asyncpg

from backroom.core.errors import StoreError, StoreUnavailable
from backroom.store.migrations import SCHEMA_VERSION_DDL, pending_migrations

log = logging.getLogger("backroom.store.postgres.store")

PooledConnection: TypeAlias = "asyncpg.pool.PoolConnectionProxy[asyncpg.Record]"
"""A connection borrowed from the pool for one operation."""

CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    # Refused, reset or unreachable; a connect that timed out.
    OSError,
    TimeoutError,
    # The connection closed under an operation, or the server rejected it.
    asyncpg.PostgresConnectionError,
    # The server is shutting down or starting up, terminated our backend, or cancelled
    # our statement (an operator, or a statement_timeout).
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.TooManyConnectionsError,
)
"""Errors that mean the server cannot be reached right now, rather than a failed query."""

_CLIENT_ERRORS = (asyncpg.InterfaceError, asyncpg.exceptions.InternalClientError)
"""asyncpg's own errors: a lost connection when it is closed, otherwise a bug of ours."""

MIGRATION_LOCK_KEY = 0x6B34_DEBB_3660_10F4
"""The advisory lock held while migrating: the first 8 bytes of sha256(b"backroom.migrate")."""


def _is_lost(connection: PooledConnection) -> bool:
    """True when the pooled connection in use has closed under us."""
    try:
        return connection.is_closed()
    except asyncpg.InterfaceError:
        # The pool takes back a connection as soon as it closes, detaching its proxy;
        # nothing else releases it while the operation still holds it.
        return True


@dataclass(frozen=True, slots=True)
class PostgresSettings:
    """How the PostgreSQL store connects.

    `dsn` is the `postgresql://` URL. Sessions abort a transaction left idle longer than
    `idle_in_transaction_timeout_ms`, so a stalled client can never hold row locks.
    `channel` is the LISTEN/NOTIFY channel that carries new-work hints, and
    `application_name` names our sessions in pg_stat_activity (over any set in the URL).
    """

    dsn: str
    min_connections: int = 1
    max_connections: int = 10
    connect_timeout_s: float = 10.0
    idle_in_transaction_timeout_ms: int = 60_000
    channel: str = "backroom_new_work"
    application_name: str = "backroom"


async def _release_as_is(connection: asyncpg.Connection[asyncpg.Record]) -> None:
    """Hand a pooled connection back without asyncpg's reset query.

    By default asyncpg sends `pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL`
    after every use: a second round trip for each one-statement operation, and one the
    caller waits for. Our pooled sessions never keep state between operations (advisory
    locks are transaction-scoped, LISTEN has a connection of its own, nothing runs SET or
    opens a cursor outside a transaction), and asyncpg still rolls back a transaction
    left open, so there is nothing to reset.
    """


class PostgresDatabase:
    """A lazily opened asyncpg pool that reports connection loss as `StoreUnavailable`."""

    def __init__(self, settings: PostgresSettings) -> None:
        self.settings = settings
        self._pool: asyncpg.Pool[asyncpg.Record] | None = None
        self._opening = asyncio.Lock()

    @property
    def _server_settings(self) -> dict[str, str]:
        return {
            "application_name": self.settings.application_name,
            # Short statements whose estimates can look large (the claim's recursive
            # CTEs) must never pay for JIT compilation: it costs more than it saves.
            "jit": "off",
            "idle_in_transaction_session_timeout": str(
                self.settings.idle_in_transaction_timeout_ms
            ),
        }

    async def connect(self) -> asyncpg.Connection[asyncpg.Record]:
        """A connection of its own, outside the pool (for LISTEN)."""
        return await asyncpg.connect(
            self.settings.dsn,
            timeout=self.settings.connect_timeout_s,
            server_settings=self._server_settings,
        )

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[PooledConnection]:
        """A pooled connection for one operation; server errors become store errors."""
        try:
            pool = await self._open_pool()
            async with pool.acquire() as connection:
                try:
                    yield connection
                except _CLIENT_ERRORS as error:
                    # Using a connection whose backend was terminated, or ending its
                    # transaction, fails inside asyncpg rather than on the server.
                    if not _is_lost(connection):
                        raise
                    raise StoreUnavailable(f"lost the connection to PostgreSQL: {error}") from error
        except CONNECTION_ERRORS as error:
            raise StoreUnavailable(f"PostgreSQL is unreachable: {error}") from error
        except asyncpg.PostgresError as error:
            raise StoreError(f"PostgreSQL: {error}") from error

    async def _open_pool(self) -> asyncpg.Pool[asyncpg.Record]:
        if self._pool is not None:
            return self._pool
        async with self._opening:
            if self._pool is None:
                self._pool = await asyncpg.create_pool(
                    self.settings.dsn,
                    min_size=self.settings.min_connections,
                    max_size=self.settings.max_connections,
                    timeout=self.settings.connect_timeout_s,
                    server_settings=self._server_settings,
                    reset=_release_as_is,
                )
            return self._pool

    async def migrate(self) -> None:
        """Apply the pending migrations, one process at a time, in one transaction.

        The transaction-scoped advisory lock makes processes that start together wait
        for each other; the first applies everything and the rest find nothing to do.
        """
        async with self.connection() as connection, connection.transaction():
            await connection.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK_KEY)
            await connection.execute(SCHEMA_VERSION_DDL)
            applied = {
                row["version"]
                for row in await connection.fetch("SELECT version FROM schema_version")
            }
            for migration in pending_migrations("postgres", applied):
                log.info("applying migration %03d_%s", migration.version, migration.name)
                await connection.execute(migration.sql)
                await connection.execute(
                    "INSERT INTO schema_version (version, name) VALUES ($1, $2)",
                    migration.version,
                    migration.name,
                )

    async def schema_version(self) -> int:
        """The number of the newest migration applied; 0 before the first."""
        async with self.connection() as connection:
            if await connection.fetchval("SELECT to_regclass('schema_version')") is None:
                return 0
            version: int = await connection.fetchval(
                "SELECT COALESCE(max(version), 0) FROM schema_version"
            )
        return version

    async def close(self) -> None:
        """Close the pool's connections (waiting for those in use to come back)."""
        async with self._opening:
            if self._pool is not None:
                await self._pool.close()
                self._pool = None
