"""The feed's wake-up for a worker's claims and finishes, sent after they commit.

NOTIFY serializes commits: a transaction that notified takes one lock for the whole
server when it commits and holds it through its WAL flush, so claims and finishes
that notify wait for each other, and for every other notifying commit on the server,
to reach the disk one by one. Those statements ask the feed trigger to stand down
(`RECORD_TRANSITIONS_HINTED`, migration 015), and the store calls `FeedHint.send`
once they have committed: the hint goes out in a transaction that writes nothing, so
it holds that lock only for a moment. One is in flight at a time, and the next goes
`SPACING_S` after it at the soonest, for every hint asked for meanwhile: each one wakes
every reader in every process (a webhook dispatcher reads the feed and moves its
position, a commit), and a busy worker commits a claim or a finish every few
milliseconds. A hint that cannot be sent is dropped: every feed reader also polls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from backroom.core.errors import StoreError
from backroom.store.postgres.database import PostgresDatabase

log = logging.getLogger("backroom.store.postgres.store")

_NOTIFY = "SELECT pg_notify('backroom_feed', '')"

SPACING_S = 0.05
"""The least time between two hints of one store (see the module)."""


class FeedHint:
    """Sends `NOTIFY backroom_feed` after commits, one at a time, coalesced."""

    def __init__(self, database: PostgresDatabase, spacing_s: float = SPACING_S) -> None:
        self._database = database
        self._spacing_s = spacing_s
        self._wanted = False
        self._task: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()

    def send(self) -> None:
        """Wake the feed's readers soon: events were committed without a notification."""
        self._wanted = True
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._send_all(), name="backroom-feed-hint"
            )

    async def close(self) -> None:
        """Send the hint still wanted, if any, at once, before the pool closes."""
        self._closing.set()
        if self._task is not None:
            await self._task
            self._task = None
        self._closing = asyncio.Event()

    async def _send_all(self) -> None:
        while self._wanted:
            self._wanted = False
            try:
                async with self._database.connection() as connection:
                    await connection.execute(_NOTIFY)
            except StoreError as error:
                log.debug("feed hint not sent (readers will poll): %s", error)
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self._spacing_s)
