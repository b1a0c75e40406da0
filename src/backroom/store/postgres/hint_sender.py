"""A hint sent after commits: one NOTIFY in flight at a time, the ones asked for meanwhile
coalesced into one more after it.

NOTIFY serializes commits: a transaction that notified takes one lock for the whole
server when it commits and holds it through its WAL flush (migration 015). So the
statements that make work commit without notifying, and the store asks a `HintSender`
to notify after them, in a transaction that writes nothing and so holds that lock only
for a moment. Two hints use it: the new-work hint (`postgres.wake_hint`), on a
connection of its own, and the feed's (`postgres.feed_hint`), on the pool's and spaced.

The first hint goes at once; one is in flight at a time, and one more goes after it for
every hint asked for meanwhile, `spacing_s` after it at the soonest. A lost connection
is opened again (the hint that found it lost is tried once more); a hint that still
cannot be sent is dropped and logged: whoever listens also polls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg

from backroom.core.errors import StoreError, StoreUnavailable
from backroom.store.postgres.database import (
    CONNECTION_ERRORS,
    Connection,
    PooledConnection,
    PostgresDatabase,
)

log = logging.getLogger("backroom.store.postgres.store")

Connect = Callable[[], Awaitable[Connection]]
"""Opens a fresh connection to the database."""

_LOST: tuple[type[BaseException], ...] = (
    *CONNECTION_ERRORS,
    asyncpg.InterfaceError,
    StoreUnavailable,
)
"""What a send on a connection that was lost (or never opened) raises."""

_REFUSED = (asyncpg.PostgresError, StoreError)
"""What a send the server refused raises."""


class HintSender:
    """Runs one NOTIFY statement soon after `send()`, coalescing (see the module).

    It runs on a connection of its own, opened with `connect`, or on one borrowed from
    `pool` for each hint. `name` names its task and its log line of a hint not sent.
    """

    def __init__(
        self,
        statement: str,
        *arguments: object,
        connect: Connect | None = None,
        pool: PostgresDatabase | None = None,
        spacing_s: float = 0.0,
        name: str,
    ) -> None:
        assert (connect is None) != (pool is None), "a connection of its own or the pool's"
        self._statement = statement
        self._arguments = arguments
        self._connect = connect
        self._pool = pool
        self._spacing_s = spacing_s
        self._name = name
        self._own: Connection | None = None
        self._wanted = False
        self._task: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()

    def send(self) -> None:
        """Notify soon: something was committed without a notification."""
        self._wanted = True
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._send_all(), name=self._name)

    async def close(self) -> None:
        """Send the hint still wanted, if any, at once; then close its own connection."""
        self._closing.set()
        if self._task is not None:
            await self._task
            self._task = None
        self._closing = asyncio.Event()
        await self._drop()

    async def _send_all(self) -> None:
        while self._wanted:
            self._wanted = False
            await self._send_one()
            if self._spacing_s > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), self._spacing_s)

    async def _send_one(self) -> None:
        error: BaseException | None = None
        for _ in range(2):  # the connection may have been lost since the last hint
            try:
                async with self._connection() as connection:
                    await connection.execute(self._statement, *self._arguments)
                return
            except _LOST as lost:
                error = lost
                await self._drop()
            except _REFUSED as refused:
                error = refused
                break
        log.warning("%s not sent (its listeners will poll): %s", self._name, error)

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[Connection | PooledConnection]:
        if self._pool is not None:
            async with self._pool.connection() as borrowed:
                yield borrowed
            return
        if self._own is None or self._own.is_closed():
            assert self._connect is not None
            self._own = await self._connect()
        yield self._own

    async def _drop(self) -> None:
        connection, self._own = self._own, None
        if connection is not None:
            with contextlib.suppress(*_LOST):
                await connection.close(timeout=1)
