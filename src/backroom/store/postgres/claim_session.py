"""The worker's claims, and its look for the next due job, on a session of their own:
`ClaimSession`.

PostgreSQL plans a prepared statement afresh at each of its first five runs on a session
(custom plans) and settles on a generic plan at the sixth; asyncpg prepares it once per
session. The claim is a large statement, which takes 1-25 ms to plan where it runs in
well under a millisecond once planned, and it ran on whichever pooled connection was
free: after a drain of 2,000 jobs, in which the pool had grown to four connections, the
first pickup's claim landed on one that had never claimed and waited for its planning.
On one session of its own, the claim is planned at a worker's first claim and never
again while the worker runs (it claims at every poll, so the session is never idle long
enough for the pool to close it); it also never waits behind a finish or a feed read for
a free connection. A process that never claims (an API server without workers) never
opens it: it is one connection more than the pool's for a worker process
(docs/operations.md).

The session keeps the plan made for any parameters (`plan_cache_mode`), the one the
claim is written for (its limits are subqueries) and `test_postgres_plans` reads. Left to
choose, PostgreSQL weighs that plan's estimate against plans made for each call's own
parameters, and beside a small table never analyzed (autovacuum off, an idle worker's
queue) those looked cheaper every time: each claim was planned afresh, ~2 ms of a
pickup's ~3 ms claim.

The claim loop's other statement, `next_wakeup` (asked after a claim that left slots
free: an idle worker's every claim), runs here too, for the same reason: planned for
each call it took 1.2-2.1 ms, once planned 0.2-0.6 ms, with 0 to 100,000 queued jobs,
analyzed or not. The two never run at once: the claim loop awaits each in turn.
"""

from __future__ import annotations

import dataclasses
from contextlib import AbstractAsyncContextManager

from backroom.store.postgres.database import Connection, PooledConnection, PostgresDatabase
from backroom.store.postgres.url import Pooler

GENERIC_PLANS = "SET plan_cache_mode = force_generic_plan"
"""Plan each prepared statement once, for any parameters (see the module)."""


class ClaimSession:
    """One connection, opened at the first claim, that every claim (and `next_wakeup`)
    of the process uses; through a transaction pooler, the pool's connections instead
    (no statement is kept there: a session of its own would only cost one more client
    connection)."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._shared = database
        self._own: PostgresDatabase | None = None
        if database.settings.pooler is not Pooler.TRANSACTION:
            one = dataclasses.replace(database.settings, min_connections=1, max_connections=1)
            self._own = _ClaimDatabase(one)

    def connection(self) -> AbstractAsyncContextManager[PooledConnection]:
        """A connection for one claim, with the session settings on (jit off); claims
        queue for it one after another if a process runs several workers."""
        return (self._own or self._shared).with_settings()

    async def close(self) -> None:
        """Close its connection, if it has one (waiting for a claim in flight to end)."""
        if self._own is not None:
            await self._own.close()


class _ClaimDatabase(PostgresDatabase):
    """The claims' pool of one connection, whose session keeps generic plans."""

    async def _set_session(self, connection: Connection) -> None:
        await super()._set_session(connection)
        await connection.execute(GENERIC_PLANS)
