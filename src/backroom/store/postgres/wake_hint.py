"""The new-work hint of a group of submissions, sent after they commit.

NOTIFY serializes commits: a transaction that notified takes one lock for the whole
server when it commits and holds it through its WAL flush (migration 015). Concurrent
HTTP submissions are stored a group at a time (`store.submit_group`); a group's
statement commits without notifying, and `WakeHint.send` then wakes the workers in a
transaction that writes nothing, so it holds that lock only for a moment. It runs on a
connection of its own, not the pool's, so that it never waits behind the next group's
statement: a worker hears of new work a round trip after the commit, whatever the load.

Hints are not spaced out (unlike the feed's, `postgres.feed_hint`): the first goes at
once, one is in flight at a time, and one more goes right after it for every hint
asked for meanwhile. A lost connection is opened again for the next hint (the hint that
found it lost is tried once more on the new one); a hint that still cannot be sent is
dropped: workers also poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

import asyncpg

from backroom.store.postgres.database import CONNECTION_ERRORS

log = logging.getLogger("backroom.store.postgres.store")

Connect = Callable[[], Awaitable["asyncpg.Connection[asyncpg.Record]"]]
"""Opens a fresh connection to the database."""

_NOTIFY = "SELECT pg_notify($1, '')"

_LOST: tuple[type[BaseException], ...] = (*CONNECTION_ERRORS, asyncpg.InterfaceError)
"""What a send on a connection that was lost (or never opened) raises."""


class WakeHint:
    """Sends `NOTIFY <channel>` on a connection of its own, soon after `send()`."""

    def __init__(self, connect: Connect, channel: str) -> None:
        self._connect = connect
        self._channel = channel
        self._connection: asyncpg.Connection[asyncpg.Record] | None = None
        self._wanted = False
        self._task: asyncio.Task[None] | None = None

    def send(self) -> None:
        """Wake the workers: work was committed without a notification."""
        self._wanted = True
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._send_all(), name="backroom-wake-hint"
            )

    async def close(self) -> None:
        """Send the hint still wanted, if any, then close the connection."""
        if self._task is not None:
            await self._task
            self._task = None
        await self._drop()

    async def _send_all(self) -> None:
        while self._wanted:
            self._wanted = False
            await self._send_one()

    async def _send_one(self) -> None:
        error: BaseException | None = None
        for _ in range(2):  # the connection may have been lost since the last hint
            try:
                if self._connection is None or self._connection.is_closed():
                    self._connection = await self._connect()
                await self._connection.execute(_NOTIFY, self._channel)
                return
            except _LOST as lost:
                error = lost
                await self._drop()
            except asyncpg.PostgresError as refused:
                error = refused
                break
        log.warning("new-work hint not sent (workers will poll): %s", error)

    async def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(*_LOST):
                await connection.close(timeout=1)
