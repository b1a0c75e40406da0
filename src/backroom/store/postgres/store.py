"""The `Store` on PostgreSQL, for many API servers and workers on many machines.

`PostgresStore` is assembled from one class per part of the `Store` protocol, each in
the module that holds its SQL (`jobs`, `leases`, `handler_writes`, `tenants`, `lanes`,
`usage`, `queries` for a job's history); the admin part (schema, stats, retention,
shutdown) is here. Each call takes a pooled connection for one statement (two when an
idempotency key repeats, in one transaction for `submit_many`), so no session ever
waits in an open transaction while the caller works. New-work hints travel by
LISTEN/NOTIFY (see `postgres.listener`).
"""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core.job import JobState
from backroom.store.postgres import queries, retention
from backroom.store.postgres.batches import PostgresBatches
from backroom.store.postgres.calls import PostgresCalls
from backroom.store.postgres.claim_session import ClaimSession
from backroom.store.postgres.database import PostgresDatabase, PostgresSettings
from backroom.store.postgres.feed_hint import FeedHint
from backroom.store.postgres.feed_methods import PostgresFeed
from backroom.store.postgres.handler_writes import PostgresHandlerWrites
from backroom.store.postgres.insight import PostgresInsight
from backroom.store.postgres.jobs import PostgresJobs
from backroom.store.postgres.lane_moves import PostgresLaneMoves
from backroom.store.postgres.lanes import PostgresLanes
from backroom.store.postgres.leases import PostgresLeases
from backroom.store.postgres.listener import channel_listener
from backroom.store.postgres.pauses import PostgresPauses
from backroom.store.postgres.queries import PostgresEvents
from backroom.store.postgres.tenants import PostgresTenants
from backroom.store.postgres.upkeep import StatisticsUpkeep
from backroom.store.postgres.usage import PostgresUsage
from backroom.store.postgres.wake_hint import WakeHint
from backroom.store.postgres.workers import PostgresWorkers
from backroom.store.records import JobCount, QueueStats, TaskBacklog
from backroom.store.rows import job_count_from_row, queue_stats_from_row, task_backlog_from_row
from backroom.store.submit_group import SubmitGroups


class PostgresStore(
    PostgresJobs,
    PostgresLeases,
    PostgresHandlerWrites,
    PostgresTenants,
    PostgresLanes,
    PostgresLaneMoves,
    PostgresUsage,
    PostgresCalls,
    PostgresEvents,
    PostgresFeed,
    PostgresPauses,
    PostgresInsight,
    PostgresWorkers,
    PostgresBatches,
):
    """`Store` on PostgreSQL through an asyncpg pool; `migrate()` once, `close()` at the end."""

    def __init__(self, settings: PostgresSettings) -> None:
        self._database = PostgresDatabase(settings)
        self._claims = ClaimSession(self._database)
        self._channel = settings.channel
        self._listener = channel_listener(self._database.connect, settings)
        self._feed_hint = FeedHint(self._database)
        self._statistics = StatisticsUpkeep(self._database)
        self._wake_hint = WakeHint(self._database.connect, settings.channel)
        # Groups in flight at once: the pool's connections but one, left for the rest.
        parallel = max(1, settings.max_connections - 1)
        self._submit_groups = SubmitGroups(self._submit_group, self._submit_alone, parallel)

    @classmethod
    def from_url(cls, url: str) -> PostgresStore:
        """A store on the database a `postgresql://` URL names, with the options it carries."""
        return cls(PostgresSettings.from_url(url))

    async def migrate(self) -> None:
        """Create or upgrade the schema; safe to call from many processes at once."""
        await self._database.migrate()

    async def schema_version(self) -> int:
        """The number of the newest migration applied; 0 before the first."""
        return await self._database.schema_version()

    async def queued_by_task(self, now: int) -> list[TaskBacklog]:
        """Each task with queued jobs: how many, and the oldest due one's age. By task."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(queries.QUEUED_BY_TASK, now)
        return [task_backlog_from_row(row, now) for row in rows]

    async def job_counts(self, now: int, window_ms: int = 3_600_000) -> list[JobCount]:
        """How many jobs each queue and tenant has in each state, and more (`JobCount`)."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(queries.JOB_COUNTS, now, now - window_ms)
        return [job_count_from_row(row) for row in rows]

    async def stats(self, now: int, window_ms: int = 3_600_000) -> list[QueueStats]:
        """Per-queue counts, the age of the oldest due queued job, and recent failures."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(queries.STATS, now, now - window_ms)
        return [queue_stats_from_row(row, now) for row in rows]

    async def prune(self, older_than: int, states: Sequence[JobState], limit: int) -> int:
        """Delete up to `limit` jobs in `states` that finished before `older_than`."""
        async with self._database.connection() as connection:
            return await retention.prune(connection, older_than, states, limit)

    async def close(self) -> None:
        """Stop listening and close every connection."""
        await self._listener.close()
        await self._wake_hint.close()
        await self._feed_hint.close()
        await self._statistics.close()
        await self._claims.close()
        await self._database.close()
