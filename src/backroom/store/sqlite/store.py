"""The embedded default `Store`: one SQLite file, shared safely by many processes.

The file runs in WAL mode, so readers never wait for the writer; every write
transaction starts with `BEGIN IMMEDIATE`, so writers queue for the lock (for up to
`busy_timeout_ms` at a time) instead of failing part-way. Each store call is one
function run on the store's own database thread (see `sqlite.connection`).
`SqliteStore` is assembled from one class per part of the `Store` protocol, each in
the module that holds its SQL (`jobs`, `leases`, `handler_writes`, `tenants`, `lanes`,
`usage`, `queries` for a job's history); the admin part is here.
"""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core.errors import ConfigError
from backroom.core.job import JobState
from backroom.store.new_work import NewWorkHints
from backroom.store.records import JobCount, QueueStats, TaskBacklog
from backroom.store.sqlite import queries
from backroom.store.sqlite import retention as retention_sql
from backroom.store.sqlite.batches import SqliteBatches
from backroom.store.sqlite.calls import SqliteCalls
from backroom.store.sqlite.commit_watch import CommitWatch
from backroom.store.sqlite.connection import SqliteDatabase
from backroom.store.sqlite.feed_methods import SqliteFeed
from backroom.store.sqlite.handler_writes import SqliteHandlerWrites
from backroom.store.sqlite.insight import SqliteInsight
from backroom.store.sqlite.jobs import SqliteJobs
from backroom.store.sqlite.lane_moves import SqliteLaneMoves
from backroom.store.sqlite.lanes import SqliteLanes
from backroom.store.sqlite.leases import SqliteLeases
from backroom.store.sqlite.migrate import apply_migrations, schema_version
from backroom.store.sqlite.pauses import SqlitePauses
from backroom.store.sqlite.queries import SqliteEvents
from backroom.store.sqlite.tenants import SqliteTenants
from backroom.store.sqlite.usage import SqliteUsage
from backroom.store.sqlite.wake_sockets import WakeSockets
from backroom.store.sqlite.workers import SqliteWorkers
from backroom.store.submit_group import SubmitGroups

_MEMORY = ":memory:"


def sqlite_path(url: str) -> str:
    """The file a `sqlite:` URL names.

    `sqlite:///jobs.db` is relative to the working directory, `sqlite:////var/jobs.db`
    absolute, and `sqlite://:memory:` a private in-memory database.
    """
    if url == f"sqlite://{_MEMORY}":
        return _MEMORY
    path = url.removeprefix("sqlite:///")
    if path in (url, ""):
        raise ConfigError(f"bad SQLite URL {url!r}: use sqlite:///FILE or sqlite://:memory:")
    return path


class SqliteStore(
    SqliteJobs,
    SqliteLeases,
    SqliteHandlerWrites,
    SqliteTenants,
    SqliteLanes,
    SqliteLaneMoves,
    SqliteUsage,
    SqliteCalls,
    SqliteEvents,
    SqliteFeed,
    SqlitePauses,
    SqliteInsight,
    SqliteWorkers,
    SqliteBatches,
):
    """`Store` on SQLite; call `migrate()` once before use, `close()` at the end."""

    def __init__(
        self, path: str, *, synchronous: str = "FULL", busy_timeout_ms: int = 5000
    ) -> None:
        self._database = SqliteDatabase(
            path, synchronous=synchronous, busy_timeout_ms=busy_timeout_ms
        )
        self._new_work = NewWorkHints()
        self._commit_watch = None if path == _MEMORY else CommitWatch(path)
        self._wake_sockets = None if path == _MEMORY else WakeSockets(path)
        self._new_work.add(self._tell_other_processes)
        self._submit_groups = SubmitGroups(
            self.submit_many, self._submit_alone, turn=self._database.write_turn
        )

    @classmethod
    def from_url(cls, url: str) -> SqliteStore:
        """A store on the database a `sqlite:` URL names (see `sqlite_path`)."""
        return cls(sqlite_path(url))

    def _tell_other_processes(self) -> None:
        if self._wake_sockets is not None:
            self._wake_sockets.announce()

    async def migrate(self) -> None:
        """Create or upgrade the schema; safe to call from many processes at once."""
        await self._database.write(apply_migrations)

    async def schema_version(self) -> int:
        """The number of the newest migration applied; 0 before the first."""
        return await self._database.read(schema_version)

    async def queued_by_task(self, now: int) -> list[TaskBacklog]:
        """Each task with queued jobs: how many, and the oldest due one's age. By task."""
        return await self._database.read(lambda connection: queries.queued_by_task(connection, now))

    async def job_counts(self, now: int, window_ms: int = 3_600_000) -> list[JobCount]:
        """How many jobs each queue and tenant has in each state, and more (`JobCount`)."""
        return await self._database.read(
            lambda connection: queries.job_counts(connection, now, window_ms)
        )

    async def stats(self, now: int, window_ms: int = 3_600_000) -> list[QueueStats]:
        """Per-queue counts, the age of the oldest due queued job, and recent failures."""
        return await self._database.read(
            lambda connection: queries.stats(connection, now, window_ms)
        )

    async def prune(self, older_than: int, states: Sequence[JobState], limit: int) -> int:
        """Delete up to `limit` jobs in `states` that finished before `older_than`."""
        chosen = tuple(states)
        return await self._database.write(
            lambda connection: retention_sql.prune(connection, older_than, chosen, limit)
        )

    async def check_writable(self) -> None:
        """Raise `StoreUnavailable` while the database is full (see `WriteCheck`)."""
        await self._database.check_writable()

    async def close(self) -> None:
        """Close the connections, the wake-up socket and the database thread."""
        # Awaited first: announcements scheduled by the last writes are sent meanwhile.
        await self._database.close()
        if self._commit_watch is not None:
            self._commit_watch.close()
        if self._wake_sockets is not None:
            self._wake_sockets.close()
