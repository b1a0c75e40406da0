"""The one seam between backroom and its storage: the `Store` protocol, split by consumer.

Every backend (SQLite, PostgreSQL) implements all of `Store` and passes the same
contract suite (`tests/contract`). Each consumer is typed against the parts it uses:
the worker against `WorkerStore` (its loops use `LeaseStore`, each attempt
`AttemptStore`, its heartbeat `WorkerRegistry`), a running handler against
`HandlerWriteStore`, retention against `AdminStore`, the service layer against
`ServiceStore`. The store never reads the clock: every method that changes or judges
time takes `now` (epoch milliseconds) from its caller. Writes to a running job name
its `Lease`; a write whose token is stale changes nothing and reports so.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Protocol, runtime_checkable

from backroom.core.job import JSON, Attempt, Job, JobEvent, JobState, Lease, NewJob, SubmitResult
from backroom.core.job_batch import SubmittedJobs
from backroom.core.lane_settlement import LaneSettlement
from backroom.core.lanes import Denied, Grant, LaneRequest
from backroom.core.outcome import Outcome
from backroom.store.batch_protocol import BatchStore
from backroom.store.call_protocol import CallStore
from backroom.store.feed_protocol import EventFeed, FeedStore, WebhookStore
from backroom.store.insight_protocol import InsightStore
from backroom.store.queue_protocol import QueueStore
from backroom.store.records import (
    HeartbeatResult,
    JobFilter,
    KeyInfo,
    LaneStatus,
    OnceRecord,
    QueueStats,
    RedriveFilter,
    TaskBacklog,
    Tenant,
)
from backroom.store.tenant_protocol import TenantStore
from backroom.store.usage_protocol import UsageStore
from backroom.store.worker_protocol import WorkerRegistry

# The values are records; they are named here too, where the store's users look.
__all__ = ["HeartbeatResult", "JobFilter", "KeyInfo", "OnceRecord", "QueueStats", "RedriveFilter"]
__all__ += ["AdminStore", "AttemptStore", "EventStore", "HandlerWriteStore", "JobStore"]
__all__ += ["LaneStore", "LeaseStore", "ServiceStore", "Store", "TenantStore", "UsageStore"]
__all__ += ["EventFeed", "InsightStore", "QueueStore", "WebhookStore", "WorkerStore"]
__all__ += ["BatchStore", "CallStore", "Tenant", "WorkerRegistry", "WriteCheck"]


class JobStore(Protocol):
    """Submitting, reading, cancelling and redriving jobs: what callers of the service do."""

    async def submit(self, new: NewJob, now: int) -> SubmitResult:
        """Store a queued job, or return the one its idempotency key already names.

        Raises `IdempotencyConflict` when the key names a job with another fingerprint.
        """

    async def submit_many(self, jobs: Sequence[NewJob], now: int) -> SubmittedJobs:
        """`submit` for many jobs in one transaction, in order: each job's id and whether
        this call created it, its `SubmitResult` built when read (see `SubmittedJobs`)."""

    async def get(self, job_id: int, tenant: str | None = None) -> Job | None:
        """The job, or None if it does not exist or belongs to another tenant."""

    async def list_jobs(self, where: JobFilter) -> list[Job]:
        """Jobs matching `where`, newest first, at most `where.limit`."""

    async def count_active(self, tenant: str) -> int:
        """How many of the tenant's jobs are queued or running."""

    async def cancel(self, job_id: int, now: int, tenant: str | None = None) -> Job | None:
        """Cancel a queued job now, or ask a running one's worker to stop it."""

    async def redrive(self, where: RedriveFilter, now: int) -> list[Job]:
        """Send failed jobs back to the queue with a fresh attempt budget.

        Their `once` entries begun but never ended are forgotten, so those effects run
        again; finished ones keep their results.
        """


class LeaseStore(Protocol):
    """Claiming jobs and ending their attempts under leases: what a worker's loops do."""

    async def claim(
        self,
        queues: Sequence[str],
        limit: int,
        worker_id: str,
        lease_ms: int,
        now: int,
        tasks: Collection[str] | None = None,
    ) -> list[Job]:
        """Take up to `limit` due queued jobs from `queues` (all queues if empty) whose
        task is one of `tasks` (None: any task; a worker names those it has, so a job
        of a task it lacks stays queued for a worker that has it).

        Order: queue by queue in the order listed (with no list, every queue with
        queued jobs, `interactive` first and `batch` last); within a queue, priority
        (highest first), then round robin among tenants (each tenant's jobs by due
        time, then id). Each returned job is running under a fresh lease
        (`job.lease`) expiring at `now + lease_ms`.
        """

    async def heartbeat(self, leases: Sequence[Lease], lease_ms: int, now: int) -> HeartbeatResult:
        """Extend the leases still held; report the lost ones and pending cancellations.

        A job offloaded to a provider batch (no worker) is held, but keeps no expiry."""

    async def finish(self, results: Sequence[tuple[Lease, Outcome]], now: int) -> list[bool]:
        """Apply each attempt's outcome if its lease is still held; True where applied."""

    async def expire_leases(self, now: int, limit: int = 1000) -> list[Job]:
        """Return jobs whose lease expired to the queue (an attempt used) or fail them."""

    async def next_wakeup(
        self, queues: Sequence[str], tasks: Collection[str] | None = None
    ) -> int | None:
        """The earliest time anything in `queues` of `tasks` (None: any task) needs a
        worker: a queued job's due time or a running job's lease expiry. None when no
        such job is queued or running."""

    def on_new_work(self, callback: Callable[[], None]) -> None:
        """Call `callback` (on the event loop) whenever jobs may have become claimable.

        A hint, not a promise: SQLite hears of its own process's writes and, by unix
        datagram, of other processes' on the same machine and user; PostgreSQL of every
        process's through LISTEN/NOTIFY. Workers still poll as a fallback.
        """

    def commit_watch(self) -> Callable[[], bool] | None:
        """A check for commits `on_new_work` does not hear of, or None if it hears them all.

        SQLite's check reports whether another process (or connection) may have
        committed since its last call; it is cheap and synchronous, for a worker to run
        on its event loop every few milliseconds while it waits. None from PostgreSQL
        (NOTIFY reaches every process) and memory (no other process can write).
        """


class HandlerWriteStore(Protocol):
    """What a running handler writes through its lease: progress and `once` entries."""

    async def set_progress(
        self, lease: Lease, fraction: float | None, partial: JSON, now: int
    ) -> bool:
        """Store coarse progress and partial output on a running job."""

    async def once_begin(self, lease: Lease, name: str, now: int) -> OnceRecord | None:
        """Claim the `once` entry `name` for this job.

        None means this caller claimed it and must run the effect; a record means an
        earlier attempt did (done, with its result) or began to (not done). Raises
        `LeaseLost` if the lease is no longer held.
        """

    async def once_end(self, lease: Lease, name: str, result: JSON, now: int) -> None:
        """Record the result of the `once` effect this lease began."""

    async def once_abort(self, lease: Lease, name: str) -> None:
        """Forget the `once` entry this lease began: its effect raised, so it may run again."""


class LaneStore(Protocol):
    """LLM lanes shared by every worker: acquiring, settling and releasing grants."""

    async def lane_acquire(self, lease: Lease, request: LaneRequest, now: int) -> Grant | Denied:
        """Take one call's share of its lane for the job `lease` holds, or say when to retry.

        The lane's shared state is locked, refilled and charged as
        `backroom.core.lanes.acquire` says, under the request's limits. A grant is
        saved on the job: its slot counts while the job runs and holds it, and frees
        when `lane_settle` settles it or the attempt ends (an expired lease too).
        Raises `LeaseLost` if the lease is no longer held (nothing is taken then).
        """

    async def lane_settle(self, lease: Lease, settlement: LaneSettlement, now: int) -> None:
        """Settle the call the job `lease` holds a grant for (see `core.lane_settlement`).

        Without a grant held (settled already, or the lease is gone) the provider's
        report still throttles and pauses the lane.
        """

    async def lane_release(self, lease: Lease) -> bool:
        """Free the slot of the grant `lease` holds, if it still holds one (True then).

        The grant's estimate stays charged: without a report nothing says otherwise.
        An attempt calls it when it ends, whether or not its call was settled.
        """

    async def lanes(self, now: int) -> list[LaneStatus]:
        """Every lane that has had a call, by name, as of `now`."""

    async def move_lane(self, lease: Lease, lane: str, now: int, *, attempt: bool) -> bool:
        """Move the job `lease` holds to `lane` (with `attempt`, its running attempt too),
        freeing a grant it held; False, changing nothing, if the lease is not held."""


class EventStore(Protocol):
    """A job's history: its attempts and its transitions."""

    async def attempts(self, job_id: int) -> list[Attempt]:
        """Every attempt of the job, oldest first, the running one included (a store
        may hold it on the job's row until it ends, as PostgreSQL does)."""

    async def events(self, job_id: int, after: int = 0) -> list[JobEvent]:
        """Every stored transition of the job, oldest first."""


class AdminStore(Protocol):
    """Running the store itself: schema, health numbers, retention, shutdown."""

    async def migrate(self) -> None:
        """Create or upgrade the schema; safe to call from many processes at once."""

    async def schema_version(self) -> int:
        """The number of the newest migration applied; 0 before the first."""

    async def stats(self, now: int, window_ms: int = 3_600_000) -> list[QueueStats]:
        """Per-queue counts, the age of the oldest due queued job, and recent failures."""

    async def queued_by_task(self, now: int) -> list[TaskBacklog]:
        """Each task with queued jobs: how many, and how long the oldest due one has
        waited (a job whose task no worker has stays queued: this shows it). By task."""

    async def prune(self, older_than: int, states: Sequence[JobState], limit: int) -> int:
        """Delete up to `limit` jobs in `states` that finished before `older_than`.

        Their attempts, events and `once` records go with them, in one short
        transaction; returns how many jobs were deleted, so a caller prunes a backlog
        by calling again until fewer than `limit` come back. Raises `ValueError` for
        a state that is not final.
        """

    async def close(self) -> None:
        """Release connections and threads."""


class AttemptStore(HandlerWriteStore, LaneStore, UsageStore, CallStore, EventStore, Protocol):
    """What one attempt needs: handler writes, paid calls, lanes, budgets, its history."""

    async def get_tenant(self, name: str) -> Tenant | None:
        """The tenant called `name`, or None."""


class WorkerStore(LeaseStore, AttemptStore, AdminStore, WorkerRegistry, EventFeed, Protocol):
    """What a worker uses: leases for its loops, what its attempts need, retention, its
    row in the worker registry, and the feed's hints (a burst worker waiting on other
    workers' jobs hears them end)."""


class ServiceStore(
    JobStore,
    EventStore,
    TenantStore,
    UsageStore,
    LaneStore,
    AdminStore,
    FeedStore,
    QueueStore,
    InsightStore,
    WorkerRegistry,
    BatchStore,
    Protocol,
):
    """What the operations layer (`backroom.service`) reads and changes."""


class Store(
    JobStore,
    LeaseStore,
    HandlerWriteStore,
    TenantStore,
    LaneStore,
    UsageStore,
    CallStore,
    EventStore,
    AdminStore,
    FeedStore,
    QueueStore,
    InsightStore,
    WorkerRegistry,
    BatchStore,
    Protocol,
):
    """Every part of the storage of jobs and what hangs off them: each backend has it all."""


@runtime_checkable
class WriteCheck(Protocol):
    """A store that can be unable to write while it still reads: SQLite on a full disk.

    Readiness asks it; a store without this method writes whenever it can be reached.
    """

    async def check_writable(self) -> None:
        """Raise `StoreUnavailable` while writes would fail; return once they would not."""
