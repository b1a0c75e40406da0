"""The embedded default `Store`: one SQLite file, shared safely by many processes.

The file runs in WAL mode, so readers never wait for the writer; every write
transaction starts with `BEGIN IMMEDIATE`, so writers queue for the lock (for up to
`busy_timeout_ms` at a time) instead of failing part-way. Each store call is one
function run on the store's own database thread (see `sqlite.connection`); the SQL
of each call lives in the `sqlite` modules by topic.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from backroom.core.errors import ConfigError
from backroom.core.job import JSON, Attempt, Job, JobEvent, JobState, Lease, NewJob, SubmitResult
from backroom.core.outcome import Outcome
from backroom.store.records import (
    HeartbeatResult,
    JobFilter,
    OnceRecord,
    QueueStats,
    RedriveFilter,
    Tenant,
)
from backroom.store.sqlite import finish as finish_sql
from backroom.store.sqlite import handler_writes as handler_sql
from backroom.store.sqlite import jobs as jobs_sql
from backroom.store.sqlite import leases as leases_sql
from backroom.store.sqlite import queries
from backroom.store.sqlite import retention as retention_sql
from backroom.store.sqlite import tenants as tenants_sql
from backroom.store.sqlite.connection import SqliteDatabase
from backroom.store.sqlite.llm_methods import SqliteLlmMethods
from backroom.store.sqlite.migrate import apply_migrations, schema_version

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


class SqliteStore(SqliteLlmMethods):
    """`Store` on SQLite; call `migrate()` once before use, `close()` at the end.

    Lanes and LLM usage are in `SqliteLlmMethods`.
    """

    def __init__(
        self, path: str, *, synchronous: str = "FULL", busy_timeout_ms: int = 5000
    ) -> None:
        self._database = SqliteDatabase(
            path, synchronous=synchronous, busy_timeout_ms=busy_timeout_ms
        )
        self._new_work_callbacks: list[Callable[[], None]] = []

    @classmethod
    def from_url(cls, url: str) -> SqliteStore:
        """A store on the database a `sqlite:` URL names (see `sqlite_path`)."""
        return cls(sqlite_path(url))

    async def migrate(self) -> None:
        """Create or upgrade the schema; safe to call from many processes at once."""
        await self._database.write(apply_migrations)

    async def schema_version(self) -> int:
        """The number of the newest migration applied; 0 before the first."""
        return await self._database.read(schema_version)

    async def close(self) -> None:
        """Close the connection and its thread."""
        await self._database.close()

    async def submit(self, new: NewJob, now: int) -> SubmitResult:
        """Store a queued job, or return the one its idempotency key already names."""
        (result,) = await self.submit_many([new], now)
        return result

    async def submit_many(self, jobs: Sequence[NewJob], now: int) -> list[SubmitResult]:
        """`submit` for many jobs in one transaction, in order."""
        if not jobs:
            return []
        batch = tuple(jobs)
        results = await self._database.write(
            lambda connection: jobs_sql.submit_many(connection, batch, now)
        )
        if any(result.created for result in results):
            self._announce_new_work()
        return results

    async def get(self, job_id: int, tenant: str | None = None) -> Job | None:
        """The job, or None if it does not exist or belongs to another tenant."""
        return await self._database.read(
            lambda connection: queries.get_job(connection, job_id, tenant)
        )

    async def list_jobs(self, where: JobFilter) -> list[Job]:
        """Jobs matching `where`, newest first, at most `where.limit`."""
        return await self._database.read(lambda connection: queries.list_jobs(connection, where))

    async def claim(
        self, queues: Sequence[str], limit: int, worker_id: str, lease_ms: int, now: int
    ) -> list[Job]:
        """Take up to `limit` due queued jobs from `queues` (all queues if empty)."""
        if limit <= 0:
            return []
        names = tuple(queues)
        return await self._database.write(
            lambda connection: leases_sql.claim(connection, names, limit, worker_id, lease_ms, now)
        )

    async def heartbeat(self, leases: Sequence[Lease], lease_ms: int, now: int) -> HeartbeatResult:
        """Extend the leases still held; report the lost ones and pending cancellations."""
        if not leases:
            return HeartbeatResult()
        held = tuple(leases)
        return await self._database.write(
            lambda connection: leases_sql.heartbeat(connection, held, lease_ms, now)
        )

    async def finish(self, results: Sequence[tuple[Lease, Outcome]], now: int) -> list[bool]:
        """Apply each attempt's outcome if its lease is still held; True where applied."""
        if not results:
            return []
        batch = tuple(results)
        applied = await self._database.write(
            lambda connection: finish_sql.finish(connection, batch, now)
        )
        if any(transition and transition.target is JobState.QUEUED for transition in applied):
            self._announce_new_work()
        return [transition is not None for transition in applied]

    async def expire_leases(self, now: int, limit: int = 1000) -> list[Job]:
        """Return jobs whose lease expired to the queue (an attempt used) or fail them."""
        expired = await self._database.write(
            lambda connection: leases_sql.expire_leases(connection, now, limit)
        )
        if any(job.state is JobState.QUEUED for job in expired):
            self._announce_new_work()
        return expired

    async def cancel(self, job_id: int, now: int, tenant: str | None = None) -> Job | None:
        """Cancel a queued job now, or ask a running one's worker to stop it."""
        return await self._database.write(
            lambda connection: jobs_sql.cancel(connection, job_id, now, tenant)
        )

    async def redrive(self, where: RedriveFilter, now: int) -> list[Job]:
        """Send failed jobs back to the queue with a fresh attempt budget."""
        redriven = await self._database.write(
            lambda connection: jobs_sql.redrive(connection, where, now)
        )
        if redriven:
            self._announce_new_work()
        return redriven

    async def prune(self, older_than: int, states: Sequence[JobState], limit: int) -> int:
        """Delete up to `limit` jobs in `states` that finished before `older_than`."""
        chosen = tuple(states)
        return await self._database.write(
            lambda connection: retention_sql.prune(connection, older_than, chosen, limit)
        )

    async def set_progress(
        self, lease: Lease, fraction: float | None, partial: JSON, now: int
    ) -> bool:
        """Store coarse progress and partial output; None leaves a value as it was."""
        return await self._database.write(
            lambda connection: handler_sql.set_progress(connection, lease, fraction, partial, now)
        )

    async def once_begin(self, lease: Lease, name: str, now: int) -> OnceRecord | None:
        """Claim the `once` entry `name`: None if this caller must run the effect."""
        return await self._database.write(
            lambda connection: handler_sql.once_begin(connection, lease, name, now)
        )

    async def once_end(self, lease: Lease, name: str, result: JSON, now: int) -> None:
        """Record the result of the `once` effect this lease began."""
        await self._database.write(
            lambda connection: handler_sql.once_end(connection, lease, name, result, now)
        )

    async def once_abort(self, lease: Lease, name: str) -> None:
        """Forget the `once` entry this lease began: its effect raised, so it may run again."""
        await self._database.write(
            lambda connection: handler_sql.once_abort(connection, lease, name)
        )

    async def attempts(self, job_id: int) -> list[Attempt]:
        """Every attempt of the job, oldest first."""
        return await self._database.read(lambda connection: queries.attempts(connection, job_id))

    async def events(self, job_id: int, after: int = 0) -> list[JobEvent]:
        """The job's transitions after the first `after` of them, oldest first."""
        return await self._database.read(
            lambda connection: queries.events(connection, job_id, after)
        )

    async def stats(self, now: int, window_ms: int = 3_600_000) -> list[QueueStats]:
        """Per-queue counts, the age of the oldest due queued job, and recent failures."""
        return await self._database.read(
            lambda connection: queries.stats(connection, now, window_ms)
        )

    async def count_active(self, tenant: str) -> int:
        """How many of the tenant's jobs are queued or running."""
        return await self._database.read(
            lambda connection: queries.count_active(connection, tenant)
        )

    async def next_wakeup(self, queues: Sequence[str]) -> int | None:
        """The earliest queued due time or running lease expiry in `queues`."""
        names = tuple(queues)
        return await self._database.read(lambda connection: queries.next_wakeup(connection, names))

    async def create_tenant(self, tenant: Tenant, key_hash: str) -> Tenant:
        """Create `tenant` (or update its caps if it exists) and add the key to it."""
        return await self._database.write(
            lambda connection: tenants_sql.create_tenant(connection, tenant, key_hash)
        )

    async def tenant_for_key(self, key_hash: str) -> Tenant | None:
        """The tenant an unrevoked key belongs to, or None."""
        return await self._database.read(
            lambda connection: tenants_sql.tenant_for_key(connection, key_hash)
        )

    async def list_tenants(self) -> list[Tenant]:
        """Every tenant, by name."""
        return await self._database.read(tenants_sql.list_tenants)

    async def revoke_keys(self, tenant: str, now: int) -> int:
        """Revoke every key of the tenant; how many were revoked."""
        return await self._database.write(
            lambda connection: tenants_sql.revoke_keys(connection, tenant, now)
        )

    async def check_writable(self) -> None:
        """Raise `StoreUnavailable` while the database is full (see `WriteCheck`)."""
        await self._database.check_writable()

    def on_new_work(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the event loop after this store queues claimable work."""
        self._new_work_callbacks.append(callback)

    def _announce_new_work(self) -> None:
        loop = asyncio.get_running_loop()
        for callback in self._new_work_callbacks:
            loop.call_soon(callback)
