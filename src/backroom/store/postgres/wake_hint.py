"""The new-work hint of a group of submissions, sent after they commit.

Concurrent HTTP submissions are stored a group at a time (`store.submit_group`); a
group's statement commits without notifying (NOTIFY's commit lock: `postgres.hint_sender`),
and `WakeHint.send` then wakes the workers. It runs on a connection of its own, not the
pool's, so that it never waits behind the next group's statement: a worker hears of new
work a round trip after the commit, whatever the load. Hints are not spaced out (unlike
the feed's, `postgres.feed_hint`).
"""

from __future__ import annotations

from backroom.store.postgres.hint_sender import Connect, HintSender


class WakeHint(HintSender):
    """Sends `NOTIFY <channel>` on a connection of its own, soon after `send()`."""

    def __init__(self, connect: Connect, channel: str) -> None:
        super().__init__(
            "SELECT pg_notify($1, '')", channel, connect=connect, name="backroom-wake-hint"
        )
