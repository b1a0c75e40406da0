"""`MemoryStore`: the whole `Store` protocol on tables in process memory, for tests.

`memory://` opens one. Nothing is durable: the jobs live as long as the store object
(stores built on one `MemoryTables` share it, as stores on one SQLite file do). Each
call runs to the end without awaiting anything, so on one event loop every call is
atomic with respect to every other, as a transaction is; no threads are involved, so
a `SimClock` runs a worker's whole timeline without waiting on any. The semantics are
the SQLite store's, down to claim order, fencing, lane room and exact usage sums; the
same contract suite (`tests/contract`) runs on both.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from backroom.core.errors import ConfigError
from backroom.core.job import JSON, Attempt, Job, JobEvent, JobState, Lease, NewJob, SubmitResult
from backroom.core.outcome import Outcome
from backroom.store.memory import claim as claim_memory
from backroom.store.memory import finish as finish_memory
from backroom.store.memory import handler_writes, queries, retention, tenants
from backroom.store.memory import jobs as job_memory
from backroom.store.memory import leases as lease_memory
from backroom.store.memory.llm_methods import MemoryLlmMethods
from backroom.store.memory.tables import MemoryTables
from backroom.store.new_work import NewWorkHints
from backroom.store.protocol import (
    HeartbeatResult,
    JobFilter,
    OnceRecord,
    QueueStats,
    RedriveFilter,
    Tenant,
)
from backroom.store.records import TaskBacklog

MEMORY_URL = "memory://"


class MemoryStore(MemoryLlmMethods):
    """`Store` in process memory; lanes and LLM usage are in `MemoryLlmMethods`.

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

    async def close(self) -> None:
        """Nothing to release; the data stays while the store object lives."""

    async def submit(self, new: NewJob, now: int) -> SubmitResult:
        """Store a queued job, or return the one its idempotency key already names."""
        (result,) = await self.submit_many([new], now)
        return result

    async def submit_many(self, jobs: Sequence[NewJob], now: int) -> list[SubmitResult]:
        """`submit` for many jobs at once, in order; a refusal stores none of them."""
        results = job_memory.submit_many(self._tables, jobs, now)
        if any(result.created for result in results):
            self._new_work.announce()
        return results

    async def get(self, job_id: int, tenant: str | None = None) -> Job | None:
        """The job, or None if it does not exist or belongs to another tenant."""
        return queries.get_job(self._tables, job_id, tenant)

    async def list_jobs(self, where: JobFilter) -> list[Job]:
        """Jobs matching `where`, newest first, at most `where.limit`."""
        return queries.list_jobs(self._tables, where)

    async def claim(
        self,
        queues: Sequence[str],
        limit: int,
        worker_id: str,
        lease_ms: int,
        now: int,
        tasks: Collection[str] | None = None,
    ) -> list[Job]:
        """Take up to `limit` due queued jobs of `tasks` (None: any) from `queues` (all
        queues if empty)."""
        if limit <= 0 or (tasks is not None and not tasks):
            return []
        names = tuple(queues)
        chosen = None if tasks is None else tuple(sorted(tasks))
        return claim_memory.claim(self._tables, names, limit, worker_id, lease_ms, now, chosen)

    async def heartbeat(self, leases: Sequence[Lease], lease_ms: int, now: int) -> HeartbeatResult:
        """Extend the leases still held; report the lost ones and pending cancellations."""
        return lease_memory.heartbeat(self._tables, leases, lease_ms, now)

    async def finish(self, results: Sequence[tuple[Lease, Outcome]], now: int) -> list[bool]:
        """Apply each attempt's outcome if its lease is still held; True where applied."""
        applied = finish_memory.finish(self._tables, results, now)
        if any(transition and transition.target is JobState.QUEUED for transition in applied):
            self._new_work.announce()
        return [transition is not None for transition in applied]

    async def expire_leases(self, now: int, limit: int = 1000) -> list[Job]:
        """Return jobs whose lease expired to the queue (an attempt used) or fail them."""
        expired = lease_memory.expire_leases(self._tables, now, limit)
        if any(job.state is JobState.QUEUED for job in expired):
            self._new_work.announce()
        return expired

    async def cancel(self, job_id: int, now: int, tenant: str | None = None) -> Job | None:
        """Cancel a queued job now, or ask a running one's worker to stop it."""
        return job_memory.cancel(self._tables, job_id, now, tenant)

    async def redrive(self, where: RedriveFilter, now: int) -> list[Job]:
        """Send failed jobs back to the queue with a fresh attempt budget."""
        redriven = job_memory.redrive(self._tables, where, now)
        if redriven:
            self._new_work.announce()
        return redriven

    async def prune(self, older_than: int, states: Sequence[JobState], limit: int) -> int:
        """Delete up to `limit` jobs in `states` that finished before `older_than`."""
        return retention.prune(self._tables, older_than, states, limit)

    async def set_progress(
        self, lease: Lease, fraction: float | None, partial: JSON, now: int
    ) -> bool:
        """Store coarse progress and partial output; None leaves a value as it was."""
        return handler_writes.set_progress(self._tables, lease, fraction, partial, now)

    async def once_begin(self, lease: Lease, name: str, now: int) -> OnceRecord | None:
        """Claim the `once` entry `name`: None if this caller must run the effect."""
        return handler_writes.once_begin(self._tables, lease, name, now)

    async def once_end(self, lease: Lease, name: str, result: JSON, now: int) -> None:
        """Record the result of the `once` effect this lease began."""
        handler_writes.once_end(self._tables, lease, name, result, now)

    async def once_abort(self, lease: Lease, name: str) -> None:
        """Forget the `once` entry this lease began: its effect raised, so it may run again."""
        handler_writes.once_abort(self._tables, lease, name)

    async def attempts(self, job_id: int) -> list[Attempt]:
        """Every attempt of the job, oldest first."""
        return queries.attempts(self._tables, job_id)

    async def events(self, job_id: int, after: int = 0) -> list[JobEvent]:
        """The job's transitions after the first `after` of them, oldest first."""
        return queries.events(self._tables, job_id, after)

    async def queued_by_task(self, now: int) -> list[TaskBacklog]:
        """Each task with queued jobs: how many, and the oldest due one's age. By task."""
        return queries.queued_by_task(self._tables, now)

    async def stats(self, now: int, window_ms: int = 3_600_000) -> list[QueueStats]:
        """Per-queue counts, the age of the oldest due queued job, and recent failures."""
        return queries.stats(self._tables, now, window_ms)

    async def count_active(self, tenant: str) -> int:
        """How many of the tenant's jobs are queued or running."""
        return queries.count_active(self._tables, tenant)

    async def next_wakeup(
        self, queues: Sequence[str], tasks: Collection[str] | None = None
    ) -> int | None:
        """The earliest queued due time or running lease expiry in `queues` of `tasks`."""
        return queries.next_wakeup(self._tables, queues, tasks)

    async def create_tenant(self, tenant: Tenant, key_hash: str) -> Tenant:
        """Create `tenant` (or update its caps if it exists) and add the key to it."""
        return tenants.create_tenant(self._tables, tenant, key_hash)

    async def tenant_for_key(self, key_hash: str) -> Tenant | None:
        """The tenant an unrevoked key belongs to, or None."""
        return tenants.tenant_for_key(self._tables, key_hash)

    async def list_tenants(self) -> list[Tenant]:
        """Every tenant, by name."""
        return tenants.list_tenants(self._tables)

    async def revoke_keys(self, tenant: str, now: int) -> int:
        """Revoke every key of the tenant; how many were revoked."""
        return tenants.revoke_keys(self._tables, tenant, now)

    async def get_tenant(self, name: str) -> Tenant | None:
        """The tenant called `name`, or None."""
        return self._tables.tenants.get(name)

    def on_new_work(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the event loop after this store queues claimable work."""
        self._new_work.add(callback)
