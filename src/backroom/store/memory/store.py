"""`MemoryStore`: the whole `Store` protocol on tables in process memory, for tests.

`memory://` opens one. Nothing is durable: the jobs live as long as the store object
(stores built on one `MemoryTables` share it, as stores on one SQLite file do). Each
call runs to the end without awaiting anything, so on one event loop every call is
atomic with respect to every other, as a transaction is; no threads are involved, so
a `SimClock` runs a worker's whole timeline without waiting on any. The semantics are
the SQLite store's, down to claim order, fencing, lane room and exact usage sums; the
same contract suite (`tests/contract`) runs on both. Like theirs, the store is
assembled from one class per part of the `Store` protocol, each in the module that
changes the tables for it; the admin part is here.
"""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core.errors import ConfigError
from backroom.core.job import JobState
from backroom.store.memory import queries, retention
from backroom.store.memory.batches import MemoryBatches
from backroom.store.memory.calls import MemoryCalls
from backroom.store.memory.feed_methods import MemoryFeed
from backroom.store.memory.handler_writes import MemoryHandlerWrites
from backroom.store.memory.insight import MemoryInsight
from backroom.store.memory.jobs import MemoryJobs
from backroom.store.memory.lane_moves import MemoryLaneMoves
from backroom.store.memory.lanes import MemoryLanes
from backroom.store.memory.leases import MemoryLeases
from backroom.store.memory.pauses import MemoryPauses
from backroom.store.memory.queries import MemoryEvents
from backroom.store.memory.tables import MemoryTables
from backroom.store.memory.tenants import MemoryTenants
from backroom.store.memory.usage import MemoryUsage
from backroom.store.memory.workers import MemoryWorkers
from backroom.store.new_work import NewWorkHints
from backroom.store.records import JobCount, QueueStats, TaskBacklog

MEMORY_URL = "memory://"


class MemoryStore(
    MemoryJobs,
    MemoryLeases,
    MemoryHandlerWrites,
    MemoryTenants,
    MemoryLanes,
    MemoryLaneMoves,
    MemoryUsage,
    MemoryCalls,
    MemoryEvents,
    MemoryFeed,
    MemoryPauses,
    MemoryInsight,
    MemoryWorkers,
    MemoryBatches,
):
    """`Store` in process memory.

    `tables` lets several stores share one memory database (a new one by default).
    """

    def __init__(self, tables: MemoryTables | None = None) -> None:
        self._tables = MemoryTables() if tables is None else tables
        self._new_work = NewWorkHints()

    @classmethod
    def from_url(cls, url: str) -> MemoryStore:
        """A store on a new, empty memory database: the URL is `memory://`."""
        if url != MEMORY_URL:
            raise ConfigError(f"bad memory URL {url!r}: use {MEMORY_URL} (each store is private)")
        return cls()

    async def migrate(self) -> None:
        """Nothing to create: the tables exist from the start."""

    async def schema_version(self) -> int:
        """0: a memory database has no migrations to apply."""
        return 0

    async def job_counts(self, now: int, window_ms: int = 3_600_000) -> list[JobCount]:
        """How many jobs each queue and tenant has in each state, and more (`JobCount`)."""
        return queries.job_counts(self._tables, now, window_ms)

    async def stats(self, now: int, window_ms: int = 3_600_000) -> list[QueueStats]:
        """Per-queue counts, the age of the oldest due queued job, and recent failures."""
        return queries.stats(self._tables, now, window_ms)

    async def queued_by_task(self, now: int) -> list[TaskBacklog]:
        """Each task with queued jobs: how many, and the oldest due one's age. By task."""
        return queries.queued_by_task(self._tables, now)

    async def prune(self, older_than: int, states: Sequence[JobState], limit: int) -> int:
        """Delete up to `limit` jobs in `states` that finished before `older_than`."""
        return retention.prune(self._tables, older_than, states, limit)

    async def close(self) -> None:
        """Nothing to release; the data stays while the store object lives."""
