"""The feed's wake-up for a worker's claims and finishes, sent after they commit.

Claims and finishes that notified would wait for each other, and for every other
notifying commit on the server, to reach the disk one by one (NOTIFY's commit lock:
`postgres.hint_sender`). Those statements ask the feed trigger to stand down
(`RECORD_TRANSITIONS_HINTED`, migration 015), and the store calls `FeedHint.send` once
they have committed, on a pooled connection. The next hint goes `SPACING_S` after the
last at the soonest, for every hint asked for meanwhile: each one wakes every reader in
every process (a webhook dispatcher reads the feed and moves its position, a commit),
and a busy worker commits a claim or a finish every few milliseconds.
"""

from __future__ import annotations

from backroom.store.postgres.database import PostgresDatabase
from backroom.store.postgres.hint_sender import HintSender

SPACING_S = 0.05
"""The least time between two hints of one store (see the module)."""


class FeedHint(HintSender):
    """Sends `NOTIFY backroom_feed` after commits, one at a time, spaced and coalesced."""

    def __init__(self, database: PostgresDatabase, spacing_s: float = SPACING_S) -> None:
        super().__init__(
            "SELECT pg_notify('backroom_feed', '')",
            pool=database,
            spacing_s=spacing_s,
            name="backroom-feed-hint",
        )
