"""The feed's wake-up for a worker's claims and finishes, sent after they commit.

NOTIFY serializes commits: a transaction that notified takes one lock for the whole
server when it commits and holds it through its WAL flush, so claims and finishes
that notify wait for each other, and for every other notifying commit on the server,
to reach the disk one by one. Those statements ask the feed trigger to stand down
(`RECORD_TRANSITIONS_HINTED`, migration 015), and the store calls `FeedHint.send`
once they have committed: the hint goes out in a transaction that writes nothing, so
it holds that lock only for a moment. One is in flight at a time; hints asked for
meanwhile go out as one after it, which bounds them under load. A hint that cannot
be sent is dropped: every feed reader also polls.
"""

from __future__ import annotations

import asyncio
import logging

from backroom.core.errors import StoreError
from backroom.store.postgres.database import PostgresDatabase

log = logging.getLogger("backroom.store.postgres.store")

_NOTIFY = "SELECT pg_notify('backroom_feed', '')"


class FeedHint:
    """Sends `NOTIFY backroom_feed` after commits, one at a time, coalesced."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._database = database
        self._wanted = False
        self._task: asyncio.Task[None] | None = None

    def send(self) -> None:
        """Wake the feed's readers soon: events were committed without a notification."""
        self._wanted = True
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._send_all(), name="backroom-feed-hint"
            )

    async def close(self) -> None:
        """Send the hint still wanted, if any, before the pool closes."""
        if self._task is not None:
            await self._task
            self._task = None

    async def _send_all(self) -> None:
        while self._wanted:
            self._wanted = False
            try:
                async with self._database.connection() as connection:
                    await connection.execute(_NOTIFY)
            except StoreError as error:
                log.debug("feed hint not sent (readers will poll): %s", error)
                return
