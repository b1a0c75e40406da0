"""The `Store` on PostgreSQL, for many API servers and workers on many machines.

Each call takes a pooled connection for one statement (two when an idempotency key
repeats, in one transaction for `submit_many`), so no session ever waits in an open
transaction while the caller works. A claim is one `FOR UPDATE SKIP LOCKED` statement
that also opens the attempts and logs the events; a batch of outcomes is one statement
too (see `postgres.finish`). New-work hints travel by LISTEN/NOTIFY (see
`postgres.listener`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from backroom.core.errors import LeaseLost
from backroom.core.job import (
    JSON,
    Attempt,
    Job,
    JobEvent,
    JobState,
    Lease,
    NewJob,
    SubmitResult,
)
from backroom.core.outcome import Outcome
from backroom.store.postgres import finish as finish_sql
from backroom.store.postgres import handler_writes as handler_sql
from backroom.store.postgres import jobs as jobs_sql
from backroom.store.postgres import leases as leases_sql
from backroom.store.postgres import queries, retention, tenants
from backroom.store.postgres.database import PostgresDatabase, PostgresSettings
from backroom.store.postgres.listener import new_work_listener
from backroom.store.postgres.llm_methods import PostgresLlmMethods
from backroom.store.records import (
    HeartbeatResult,
    JobFilter,
    OnceRecord,
    QueueStats,
    RedriveFilter,
    Tenant,
)
from backroom.store.rows import (
    attempt_from_row,
    dump_json,
    dump_nullable_json,
    event_from_row,
    job_from_row,
    load_json,
    queue_stats_from_row,
)


class PostgresStore(PostgresLlmMethods):
    """`Store` on PostgreSQL through an asyncpg pool; `migrate()` once, `close()` at the end.

    Lanes and LLM usage are in `PostgresLlmMethods`.
    """

    def __init__(self, settings: PostgresSettings) -> None:
        self._database = PostgresDatabase(settings)
        self._channel = settings.channel
        self._listener = new_work_listener(self._database.connect, settings)

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

    async def close(self) -> None:
        """Stop listening and close every connection."""
        await self._listener.close()
        await self._database.close()

    async def submit(self, new: NewJob, now: int) -> SubmitResult:
        """Store a queued job, or return the one its idempotency key already names."""
        if new.max_active is not None:
            (capped,) = await self.submit_many([new], now)
            return capped
        # One statement: it inserts atomically, and a repeated key inserts nothing.
        async with self._database.connection() as connection:
            (result,) = await jobs_sql.submit_jobs(connection, [new], now, self._channel)
        return result

    async def submit_many(self, jobs: Sequence[NewJob], now: int) -> list[SubmitResult]:
        """`submit` for many jobs in one transaction, in order."""
        if not jobs:
            return []
        async with self._database.transaction() as connection:
            return await jobs_sql.submit_jobs(connection, jobs, now, self._channel)

    async def get(self, job_id: int, tenant: str | None = None) -> Job | None:
        """The job, or None if it does not exist or belongs to another tenant."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(queries.GET_JOB, job_id, tenant)
        return None if row is None else job_from_row(row)

    async def list_jobs(self, where: JobFilter) -> list[Job]:
        """Jobs matching `where`, newest first, at most `where.limit`."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(
                queries.LIST_JOBS,
                where.before_id,
                where.tenant,
                where.queue,
                where.task,
                list(where.states),
                where.limit,
            )
        return [job_from_row(row) for row in rows]

    async def claim(
        self, queues: Sequence[str], limit: int, worker_id: str, lease_ms: int, now: int
    ) -> list[Job]:
        """Take up to `limit` due queued jobs from `queues` (all queues if empty)."""
        if limit <= 0:
            return []
        async with self._database.with_settings() as connection:
            return await leases_sql.claim(connection, queues, limit, worker_id, lease_ms, now)

    async def heartbeat(self, leases: Sequence[Lease], lease_ms: int, now: int) -> HeartbeatResult:
        """Extend the leases still held; report the lost ones and pending cancellations."""
        if not leases:
            return HeartbeatResult()
        async with self._database.connection() as connection:
            return await leases_sql.heartbeat(connection, leases, lease_ms, now)

    async def finish(self, results: Sequence[tuple[Lease, Outcome]], now: int) -> list[bool]:
        """Apply each attempt's outcome if its lease is still held; True where applied."""
        if not results:
            return []
        async with self._database.connection() as connection:
            return await finish_sql.finish(connection, results, now, self._channel)

    async def expire_leases(self, now: int, limit: int = 1000) -> list[Job]:
        """Return jobs whose lease expired to the queue (an attempt used) or fail them."""
        async with self._database.connection() as connection:
            return await finish_sql.expire_leases(connection, now, limit, self._channel)

    async def cancel(self, job_id: int, now: int, tenant: str | None = None) -> Job | None:
        """Cancel a queued job now, or ask a running one's worker to stop it."""
        async with self._database.connection() as connection:
            return await jobs_sql.cancel(connection, job_id, now, tenant)

    async def redrive(self, where: RedriveFilter, now: int) -> list[Job]:
        """Send failed jobs back to the queue with a fresh attempt budget."""
        async with self._database.connection() as connection:
            return await jobs_sql.redrive(connection, where, now, self._channel)

    async def prune(self, older_than: int, states: Sequence[JobState], limit: int) -> int:
        """Delete up to `limit` jobs in `states` that finished before `older_than`."""
        async with self._database.connection() as connection:
            return await retention.prune(connection, older_than, states, limit)

    async def set_progress(
        self, lease: Lease, fraction: float | None, partial: JSON, now: int
    ) -> bool:
        """Store coarse progress and partial output; None leaves a value as it was."""
        async with self._database.connection() as connection:
            updated = await connection.fetchval(
                handler_sql.SET_PROGRESS,
                lease.job_id,
                lease.token,
                fraction,
                dump_nullable_json(partial),
                now,
            )
        return updated is not None

    async def once_begin(self, lease: Lease, name: str, now: int) -> OnceRecord | None:
        """Claim the `once` entry `name`: None if this caller must run the effect."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(
                handler_sql.ONCE_BEGIN, lease.job_id, lease.token, name, now
            )
        if row is None or not row["held"]:
            raise _lease_lost(lease)
        if row["begun"]:
            return None
        return OnceRecord(done=row["done"], result=load_json(row["result"]))

    async def once_end(self, lease: Lease, name: str, result: JSON, now: int) -> None:
        """Record the result of the `once` effect this lease began."""
        async with self._database.connection() as connection:
            held = await connection.fetchval(
                handler_sql.ONCE_END, lease.job_id, lease.token, name, dump_json(result), now
            )
        if not held:
            raise _lease_lost(lease)

    async def once_abort(self, lease: Lease, name: str) -> None:
        """Forget the `once` entry this lease began: its effect raised, so it may run again."""
        async with self._database.connection() as connection:
            held = await connection.fetchval(
                handler_sql.ONCE_ABORT, lease.job_id, lease.token, name
            )
        if not held:
            raise _lease_lost(lease)

    async def attempts(self, job_id: int) -> list[Attempt]:
        """Every attempt of the job, oldest first."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(queries.ATTEMPTS, job_id)
        return [attempt_from_row(row) for row in rows]

    async def events(self, job_id: int, after: int = 0) -> list[JobEvent]:
        """The job's transitions after the first `after` of them, oldest first."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(queries.EVENTS, job_id, after)
        return [event_from_row(row) for row in rows]

    async def stats(self, now: int, window_ms: int = 3_600_000) -> list[QueueStats]:
        """Per-queue counts, the age of the oldest due queued job, and recent failures."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(queries.STATS, now, now - window_ms)
        return [queue_stats_from_row(row, now) for row in rows]

    async def count_active(self, tenant: str) -> int:
        """How many of the tenant's jobs are queued or running."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(queries.ACTIVE_BY_TENANT, [tenant])
        active: int = 0 if row is None else row["active"]
        return active

    async def next_wakeup(self, queues: Sequence[str]) -> int | None:
        """The earliest queued due time or running lease expiry in `queues`."""
        condition, arguments = queries.queue_filter(queues, parameter=1)
        async with self._database.connection() as connection:
            wakeup: int | None = await connection.fetchval(
                queries.NEXT_WAKEUP.format(queue_filter=condition), *arguments
            )
        return wakeup

    async def create_tenant(self, tenant: Tenant, key_hash: str) -> Tenant:
        """Create `tenant` (or update its caps if it exists) and add the key to it."""
        async with self._database.connection() as connection:
            return await tenants.create_tenant(connection, tenant, key_hash)

    async def tenant_for_key(self, key_hash: str) -> Tenant | None:
        """The tenant an unrevoked key belongs to, or None."""
        async with self._database.connection() as connection:
            return await tenants.tenant_for_key(connection, key_hash)

    async def list_tenants(self) -> list[Tenant]:
        """Every tenant, by name."""
        async with self._database.connection() as connection:
            return await tenants.list_tenants(connection)

    async def revoke_keys(self, tenant: str, now: int) -> int:
        """Revoke every key of the tenant; how many were revoked."""
        async with self._database.connection() as connection:
            return await tenants.revoke_keys(connection, tenant, now)

    def on_new_work(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the event loop whenever any process may have queued work.

        It is also called each time listening starts or resumes after a lost connection,
        since work queued before then went unheard. The first registration starts
        listening, so it must be made on a running loop. Through a transaction pooler with
        no listen URL nothing listens: workers find new work by polling.
        """
        self._listener.add(callback)


def _lease_lost(lease: Lease) -> LeaseLost:
    return LeaseLost(f"job {lease.job_id} is no longer held under lease {lease.token}")
