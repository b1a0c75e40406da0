"""The new-work hint of a group of submissions, sent after they commit.

Concurrent HTTP submissions are stored a group at a time (`store.submit_group`); a
group's statement commits without notifying (NOTIFY's commit lock: `postgres.hint_sender`),
and `WakeHint.send` then wakes the workers. It runs on a connection of its own, not the
pool's, so that it never waits behind the next group's statement: a worker hears of new
work a round trip after the commit, whatever the load.

The first hint after a quiet spell goes at once; under a steady stream of groups the next
one goes `SPACING_S` after the last at the soonest, carrying every group committed
meanwhile. Unspaced, a server sent about one NOTIFY per group (each a transaction of its
own, and every listening worker woken by each), and with two server processes, whose
groups are smaller, hints were half of the transactions of the HTTP submit benchmark.
"""

from __future__ import annotations

from backroom.store.postgres.hint_sender import Connect, HintSender

SPACING_S = 0.002
"""The least time between two hints of one store: what a job submitted just after a
hint may wait for its own, far under the pickup latency's budget (issue 13: p99 10 ms)."""


class WakeHint(HintSender):
    """Sends `NOTIFY <channel>` on a connection of its own, soon after `send()`."""

    def __init__(self, connect: Connect, channel: str, spacing_s: float = SPACING_S) -> None:
        super().__init__(
            "SELECT pg_notify($1, '')",
            channel,
            connect=connect,
            spacing_s=spacing_s,
            name="backroom-wake-hint",
        )
