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
from backroom.store.migrations import SCHEMA_VERSION_DDL, pending_migrations, shipped_versions
from backroom.store.postgres.array_types import learn_array_types, learn_array_types_pooled
from backroom.store.postgres.url import Pooler, split_options

log = logging.getLogger("backroom.store.postgres.store")

Connection: TypeAlias = "asyncpg.Connection[asyncpg.Record]"
"""A connection of asyncpg's."""

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

DEFAULT_POOL_MAX = 4
"""Connections a process opens at most unless told otherwise (see docs/operations.md)."""

_STATEMENT_CACHE_SIZE = 100
"""asyncpg's default: prepared statements kept per connection."""

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

    `dsn` is the `postgresql://` URL, without backroom's own options (see
    `from_url`). The pool keeps `min_connections` open and opens at most
    `max_connections`. `pooler` says what the connections go through (see `Pooler`);
    `listen_dsn` is where the LISTEN connection goes instead of `dsn` (a direct or
    session-pooled URL). Transactions left idle longer than
    `idle_in_transaction_timeout_ms` are aborted, so a stalled client can never hold row
    locks. `channel` is the LISTEN/NOTIFY channel that carries new-work hints, and
    `application_name` names our sessions in pg_stat_activity (over any set in the URL).
    """

    dsn: str
    min_connections: int = 1
    max_connections: int = DEFAULT_POOL_MAX
    pooler: Pooler = Pooler.NONE
    listen_dsn: str | None = None
    connect_timeout_s: float = 10.0
    idle_in_transaction_timeout_ms: int = 60_000
    channel: str = "backroom_new_work"
    application_name: str = "backroom"

    @classmethod
    def from_url(cls, url: str) -> PostgresSettings:
        """Settings from a URL and its options (`pooler`, `pool_min`, `pool_max`, `listen_url`)."""
        dsn, options = split_options(url)
        pool_max = options.pool_max or max(DEFAULT_POOL_MAX, options.pool_min or 0)
        return cls(
            dsn=dsn,
            min_connections=1 if options.pool_min is None else options.pool_min,
            max_connections=pool_max,
            pooler=options.pooler or Pooler.NONE,
            listen_dsn=options.listen_url,
        )

    @property
    def listens(self) -> bool:
        """False when new work can only be found by polling: LISTEN through a transaction
        pooler "succeeds" on a server session that is soon another client's, and every
        notification after that is lost."""
        return self.pooler is not Pooler.TRANSACTION or self.listen_dsn is not None

    def set_statements(self, *, local: bool) -> str:
        """The SET statements our sessions need, as one SQL string (`SET LOCAL` if `local`)."""
        command = "SET LOCAL" if local else "SET"
        values = {
            # Short statements whose estimates can look large (the claim's recursive
            # CTEs) must never pay for JIT compilation: it costs more than it saves.
            "jit": "off",
            "idle_in_transaction_session_timeout": str(int(self.idle_in_transaction_timeout_ms)),
        }
        return "; ".join(f"{command} {name} = {value}" for name, value in values.items())


async def _release_as_is(connection: Connection) -> None:
    """Hand a pooled connection back without asyncpg's reset query.

    By default asyncpg sends `pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL`
    after every use: a second round trip for each one-statement operation, and one the
    caller waits for. Our pooled sessions keep no state between operations but the
    settings applied when they open, which must stay (advisory locks are
    transaction-scoped, LISTEN has a connection of its own, nothing else runs SET or
    opens a cursor outside a transaction), and asyncpg still rolls back a transaction
    left open, so there is nothing to reset.
    """


class PostgresDatabase:
    """A lazily opened asyncpg pool that reports connection loss as `StoreUnavailable`."""

    def __init__(self, settings: PostgresSettings) -> None:
        self.settings = settings
        self._pool: asyncpg.Pool[asyncpg.Record] | None = None
        self._opening = asyncio.Lock()

    async def connect(self) -> asyncpg.Connection[asyncpg.Record]:
        """A connection of its own, outside the pool, for LISTEN or the wake hints (to
        `listen_dsn` if set; without it, through a transaction pooler, no statement
        cache: see `_open_pool`)."""
        pooled = self.settings.listen_dsn is None and self.settings.pooler is Pooler.TRANSACTION
        return await asyncpg.connect(
            self.settings.listen_dsn or self.settings.dsn,
            timeout=self.settings.connect_timeout_s,
            server_settings={"application_name": self.settings.application_name},
            statement_cache_size=0 if pooled else _STATEMENT_CACHE_SIZE,
        )

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[PooledConnection]:
        """A pooled connection for one operation; server errors become store errors.

        Through a transaction pooler the session settings do not hold outside a
        `transaction()`: use one where they matter.
        """
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

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[PooledConnection]:
        """A pooled connection in a transaction, committed at the end, with the settings on.

        Through a transaction pooler, BEGIN and `SET LOCAL` of the settings go in one
        round trip; elsewhere every session has them already.
        """
        async with self.connection() as connection:
            if self.settings.pooler is not Pooler.TRANSACTION:
                async with connection.transaction():
                    yield connection
                return
            await connection.execute(f"BEGIN; {self.settings.set_statements(local=True)}")
            try:
                yield connection
            except BaseException:
                with contextlib.suppress(*CONNECTION_ERRORS, *_CLIENT_ERRORS):
                    await connection.execute("ROLLBACK")
                raise
            await connection.execute("COMMIT")

    def with_settings(self) -> contextlib.AbstractAsyncContextManager[PooledConnection]:
        """A pooled connection on which the session settings hold (jit off).

        A plain `connection()` wherever sessions are ours; through a transaction pooler, a
        `transaction()` (two more round trips), since only `SET LOCAL` is sure to hold.
        """
        if self.settings.pooler is Pooler.TRANSACTION:
            return self.transaction()
        return self.connection()

    async def _open_pool(self) -> asyncpg.Pool[asyncpg.Record]:
        if self._pool is not None:
            return self._pool
        async with self._opening:
            if self._pool is None:
                transaction_pooled = self.settings.pooler is Pooler.TRANSACTION
                # A named prepared statement lives in one server session, which a
                # transaction pooler hands to other clients: without a statement cache,
                # asyncpg prepares unnamed ones, which live until the statement's Sync.
                self._pool = await asyncpg.create_pool(
                    self.settings.dsn,
                    min_size=self.settings.min_connections,
                    max_size=self.settings.max_connections,
                    timeout=self.settings.connect_timeout_s,
                    # Only application_name: a pooler refuses other start-up parameters.
                    server_settings={"application_name": self.settings.application_name},
                    init=learn_array_types_pooled if transaction_pooled else self._set_session,
                    reset=_release_as_is,
                    statement_cache_size=0 if transaction_pooled else _STATEMENT_CACHE_SIZE,
                )
            return self._pool

    async def _set_session(self, connection: Connection) -> None:
        """Apply the session settings to a new connection (a session of our own), then
        look up our array types (jit off already: the lookup need not restore it)."""
        await connection.execute(self.settings.set_statements(local=False))
        await learn_array_types(connection)

    async def migrate(self) -> None:
        """Apply the pending migrations, one process at a time, in one transaction.

        The transaction-scoped advisory lock makes processes that start together wait
        for each other; the first applies everything and the rest find nothing to do.
        A schema already up to date (every process start but the first) is seen in one
        statement, without the transaction, the lock or the migrations' SQL.
        """
        if await self._applied_all():
            return
        async with self.transaction() as connection:
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

    async def _applied_all(self) -> bool:
        """Whether every shipped migration is applied already (False if unsure)."""
        async with self.connection() as connection:
            try:
                rows = await connection.fetch("SELECT version FROM schema_version")
            except asyncpg.UndefinedTableError:
                return False
        return shipped_versions("postgres") <= {row["version"] for row in rows}

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
