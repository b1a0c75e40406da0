"""The memory store's tables: one mutable record per row, and the indexes kept beside them.

Records mirror the SQLite schema column for column and read by column name, so the
converters of `backroom.store.rows` and `backroom.store.lane_rows` turn them into core
values exactly as they turn a database row. JSON values are kept as compact text, as
the SQL stores keep them: a job read back is a fresh copy that no caller can mutate
in place, and a value that is not JSON fails at the call that stores it.

Every change of a job's state or due time goes through `MemoryTables.changing`, which
takes the job out of the indexes before the change and puts it back after, so the
indexes always agree with the rows.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from backroom.core.job import JobEvent, JobState, Lease
from backroom.core.spend import CallIntent, CallState
from backroom.core.usage import AttemptUsage
from backroom.core.webhooks import (
    DeliveryAttempt,
    SigningSecret,
    WebhookDelivery,
    WebhookSubscription,
)
from backroom.core.workers import WorkerRecord
from backroom.store.memory.batch_tables import BatchTables
from backroom.store.protocol import Tenant
from backroom.store.records import PauseKind

ClaimKey = tuple[int, int, int]
"""A queued job's place in its tenant's claim order: (-priority, run_at, id)."""

DueKey = tuple[int, int]
"""A queued job's place among its queue and lane's jobs by due time: (run_at, id)."""


class Record:
    """A stored row whose columns read by name (`row["state"]`), as `rows.Row` asks."""

    __slots__ = ()

    def __getitem__(self, key: str, /) -> Any:
        """The value of column `key`."""
        return getattr(self, key)


@dataclass(slots=True)
class JobRow(Record):
    """One row of the jobs table (JSON columns as text)."""

    id: int
    tenant: str
    task: str
    queue: str
    priority: int
    state: JobState
    input: str
    max_attempts: int
    timeout_ms: int | None
    run_at: int
    created_at: int
    updated_at: int
    idempotency_key: str | None
    fingerprint: str | None
    metadata: str
    lane: str | None
    webhook_url: str | None = None
    traceparent: str | None = None
    attempt: int = 0
    started_at: int | None = None
    finished_at: int | None = None
    lease_token: int = 0
    lease_expires_at: int | None = None
    worker_id: str | None = None
    result: str | None = None
    error_kind: str | None = None
    error_message: str | None = None
    progress: float | None = None
    partial: str | None = None
    cancel_requested: bool = False
    lane_grant: int | None = None
    """The tokens the running attempt was granted in its lane; None: no grant held."""
    wait_reason: str | None = None
    waiting_since: int | None = None


@dataclass(slots=True)
class AttemptRow(Record):
    """One row of the attempts table, keyed by its job and lease token."""

    job_id: int
    number: int
    lease_token: int
    worker_id: str
    started_at: int
    finished_at: int | None = None
    outcome: str | None = None
    error_kind: str | None = None
    error_message: str | None = None
    next_attempt_at: int | None = None
    lane: str | None = None


@dataclass(slots=True)
class OnceRow:
    """One `ctx.once` entry of a job: `done` once its effect's result is stored."""

    done: bool
    created_at: int
    result: str | None = None


@dataclass(slots=True)
class KeyRow:
    """One API key, by its hash: the tenant it belongs to and when it was revoked."""

    tenant: str
    created_at: int
    revoked_at: int | None = None
    read_only: bool = False


@dataclass(slots=True)
class LaneRow(Record):
    """One lane's shared row, in the order of `lane_rows.LANE_COLUMNS`."""

    name: str
    max_concurrency: int | None
    requests_per_minute: int | None
    tokens_per_minute: int | None
    request_credit: int
    token_credit: int
    paused_until: int
    updated_at: int
    call_tokens: int
    refusal_streak: int = 0
    failure_streak: int = 0


@dataclass(slots=True)
class CallRow:
    """One paid LLM call's record (`llm_calls`)."""

    intent: CallIntent
    state: CallState
    response_id: str | None = None


@dataclass
class WebhookTables:
    """Webhook subscriptions, signing secrets, deliveries and their attempts."""

    subscriptions: dict[int, WebhookSubscription] = field(default_factory=dict)
    last_subscription_id: int = 0
    secrets: dict[str, SigningSecret] = field(default_factory=dict)
    deliveries: dict[int, WebhookDelivery] = field(default_factory=dict)
    last_delivery_id: int = 0
    delivery_keys: set[tuple[int, int, str]] = field(default_factory=set)
    attempts: dict[int, list[DeliveryAttempt]] = field(default_factory=dict)


@dataclass
class MemoryTables:
    """Every table of one memory database, and the indexes the hot calls read."""

    jobs: dict[int, JobRow] = field(default_factory=dict)
    last_job_id: int = 0
    by_key: dict[tuple[str, str], int] = field(default_factory=dict)
    attempts: dict[int, list[AttemptRow]] = field(default_factory=dict)
    events: dict[int, list[JobEvent]] = field(default_factory=dict)
    once: dict[int, dict[str, OnceRow]] = field(default_factory=dict)
    tenants: dict[str, Tenant] = field(default_factory=dict)
    api_keys: dict[str, KeyRow] = field(default_factory=dict)
    session_secret: str | None = None
    lanes: dict[str, LaneRow] = field(default_factory=dict)
    # LLM usage by job, then by the lease token of the claim that made the call.
    usage: dict[int, dict[int, AttemptUsage]] = field(default_factory=dict)
    calls: dict[tuple[int, int], CallRow] = field(default_factory=dict)
    # The event feed: every job's events in one order, as (event id, job id, event).
    feed: list[tuple[int, int, JobEvent]] = field(default_factory=list)
    last_event_id: int = 0
    feed_cursors: dict[str, int] = field(default_factory=dict)
    feed_listeners: list[Callable[[], None]] = field(default_factory=list)
    webhooks: WebhookTables = field(default_factory=WebhookTables)
    batches: BatchTables = field(default_factory=BatchTables)
    # Paused queues and lanes: when each was paused.
    pauses: dict[tuple[PauseKind, str], int] = field(default_factory=dict)
    workers: dict[str, WorkerRecord] = field(default_factory=dict)
    # Indexes: each queue's queued jobs per tenant in claim order, and per lane by due
    # time; the running jobs; each tenant's count of queued and running jobs.
    claimable: dict[str, dict[str, list[ClaimKey]]] = field(default_factory=dict)
    due: dict[tuple[str, str | None], list[DueKey]] = field(default_factory=dict)
    running: dict[int, JobRow] = field(default_factory=dict)
    active: Counter[str] = field(default_factory=Counter)

    def held(self, lease: Lease) -> JobRow | None:
        """The job's row while it runs under `lease`; None once the lease is not held."""
        row = self.running.get(lease.job_id)
        return row if row is not None and row.lease_token == lease.token else None

    def insert_job(self, row: JobRow) -> None:
        """Store a new job row (its id is the next one) and index it."""
        self.jobs[row.id] = row
        self.last_job_id = row.id
        if row.idempotency_key is not None:
            self.by_key[row.tenant, row.idempotency_key] = row.id
        self._index(row)

    def delete_job(self, job_id: int) -> None:
        """Delete a job with every row that names it but its usage (the spend record)."""
        row = self.jobs.pop(job_id)
        self._unindex(row)
        if row.idempotency_key is not None:
            del self.by_key[row.tenant, row.idempotency_key]
        for table in (self.attempts, self.events, self.once):
            table.pop(job_id, None)
        for call in [call for call in self.calls if call[0] == job_id]:
            del self.calls[call]

    @contextmanager
    def changing(self, row: JobRow) -> Iterator[JobRow]:
        """Change a job's row in the `with` body; the indexes follow the change."""
        self._unindex(row)
        try:
            yield row
        finally:
            self._index(row)

    def _index(self, row: JobRow) -> None:
        if row.state is JobState.QUEUED:
            tenants = self.claimable.setdefault(row.queue, {})
            bisect.insort(tenants.setdefault(row.tenant, []), _claim_key(row))
            bisect.insort(self.due.setdefault((row.queue, row.lane), []), (row.run_at, row.id))
            self.active[row.tenant] += 1
        elif row.state is JobState.RUNNING:
            self.running[row.id] = row
            self.active[row.tenant] += 1

    def _unindex(self, row: JobRow) -> None:
        if row.state is JobState.QUEUED:
            tenants = self.claimable[row.queue]
            _remove(tenants, row.tenant, _claim_key(row))
            if not tenants:
                del self.claimable[row.queue]
            _remove(self.due, (row.queue, row.lane), (row.run_at, row.id))
            self.active[row.tenant] -= 1
        elif row.state is JobState.RUNNING:
            del self.running[row.id]
            self.active[row.tenant] -= 1


def _claim_key(row: JobRow) -> ClaimKey:
    return (-row.priority, row.run_at, row.id)


def _remove(index: dict[Any, list[Any]], group: Any, key: Any) -> None:
    """Take `key` out of the sorted list `index[group]`, dropping the list once empty."""
    keys = index[group]
    del keys[bisect.bisect_left(keys, key)]
    if not keys:
        del index[group]


def paused(tables: MemoryTables, kind: PauseKind) -> set[str]:
    """The names of the paused queues or lanes."""
    return {name for paused_kind, name in tables.pauses if paused_kind is kind}
