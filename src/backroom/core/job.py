"""What a job is: its state, its stored record, and what a caller asks for.

Times are integers: milliseconds since the Unix epoch, always handed in by the caller
(see `backroom.clock`). Nothing here reads the clock or does I/O.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any

JSON = Any
"""A value that round-trips through `json.dumps` / `json.loads`."""


class JobState(enum.StrEnum):
    """The five states of a job; the last three are terminal."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        """True for succeeded, failed and cancelled: no transition leaves them but redrive."""
        return self in TERMINAL_STATES


TERMINAL_STATES = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED})


class WaitReason(enum.StrEnum):
    """Why a queued job that was due could not start, and waits without using an attempt."""

    LANE = "lane"
    """Its LLM lane had no room (concurrency, requests or tokens per minute)."""
    RATE_LIMIT = "rate_limit"
    """Its provider refused the call for a rate limit (a 429)."""
    BUDGET = "budget"
    """Its tenant has spent today's LLM budget: it waits for the next UTC day."""
    STORE = "store"
    """The store failed before it could start."""


DEFAULT_TENANT = "default"
DEFAULT_QUEUE = "interactive"
DEFAULT_QUEUES = ("interactive", "batch")
"""The queues a server accepts out of the box, most urgent first."""


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """The error an attempt ended with: the exception's class name and its message."""

    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}" if self.message else self.kind


@dataclass(frozen=True, slots=True)
class NewJob:
    """A request to create a job, as `Store.submit` takes it.

    `fingerprint` is the canonical hash of what makes two submissions "the same"
    (see `backroom.core.idempotency`); the store compares it when a key repeats.
    """

    task: str
    input: JSON
    run_at: int
    tenant: str = DEFAULT_TENANT
    queue: str = DEFAULT_QUEUE
    priority: int = 0
    max_attempts: int = 3
    timeout_ms: int | None = None
    idempotency_key: str | None = None
    fingerprint: str | None = None
    metadata: dict[str, JSON] = field(default_factory=dict)
    max_active: int | None = None
    """Refuse (`QueueFull`) if the tenant already has this many jobs queued or running;
    checked in the same transaction as the insert, after the idempotency key."""
    lane: str | None = None
    """The lane whose shared limits the job's calls count against (see
    `backroom.core.lanes`); a claim passes over a job whose lane is paused or full."""
    webhook_url: str | None = None
    """Where to POST the job's end (succeeded, failed or cancelled), signed."""
    traceparent: str | None = None
    """The W3C `traceparent` of the trace the submission was part of: each attempt's
    span continues it."""


@dataclass(frozen=True, slots=True)
class Lease:
    """Proof that a worker holds a running job.

    `token` is a fencing token: it grows by one on every claim of the job and never
    goes back, so a store can refuse a write from a worker whose lease was taken over.
    """

    job_id: int
    token: int
    attempt: int


@dataclass(frozen=True, slots=True)
class Job:
    """One stored job, as the store last wrote it."""

    id: int
    tenant: str
    task: str
    queue: str
    priority: int
    state: JobState
    input: JSON
    attempt: int
    max_attempts: int
    timeout_ms: int | None
    run_at: int
    created_at: int
    updated_at: int
    started_at: int | None = None
    finished_at: int | None = None
    idempotency_key: str | None = None
    fingerprint: str | None = None
    lease_token: int = 0
    lease_expires_at: int | None = None
    worker_id: str | None = None
    result: JSON = None
    error: ErrorInfo | None = None
    progress: float | None = None
    partial: JSON = None
    cancel_requested: bool = False
    metadata: dict[str, JSON] = field(default_factory=dict)
    lane: str | None = None
    webhook_url: str | None = None
    traceparent: str | None = None
    wait_reason: WaitReason | None = None
    """Why the queued job waits (until `run_at`), when it was due but could not start."""
    waiting_since: int | None = None
    """When the waiting job was first due: how long it has waited, for the queue's age."""

    @property
    def lease(self) -> Lease:
        """The lease of the current claim (meaningful while the job is running)."""
        return Lease(self.id, self.lease_token, self.attempt)

    def moved_to(self, lane: str) -> Job:
        """This job as it is once moved to `lane` (a fallback)."""
        return dataclasses.replace(self, lane=lane)

    @property
    def attempts_left(self) -> int:
        """How many more attempts the job may start."""
        return max(0, self.max_attempts - self.attempt)


class AttemptOutcome(enum.StrEnum):
    """How one attempt ended."""

    SUCCEEDED = "succeeded"
    RETRY = "retry"
    FAILED = "failed"
    CANCELLED = "cancelled"
    LEASE_EXPIRED = "lease_expired"
    INTERRUPTED = "interrupted"
    DEFERRED = "deferred"


@dataclass(frozen=True, slots=True)
class Attempt:
    """The stored record of one attempt of a job."""

    job_id: int
    number: int
    worker_id: str
    started_at: int
    finished_at: int | None = None
    outcome: AttemptOutcome | None = None
    error: ErrorInfo | None = None
    next_attempt_at: int | None = None
    lane: str | None = None
    """The lane its call went to (a job with fallbacks changes lanes)."""
    lease_token: int = field(kw_only=True)
    """The claim it ran under: unique among the job's attempts, whose numbers a redrive
    starts again (the key of its LLM call's usage, `AttemptUsage.lease_token`)."""


@dataclass(frozen=True, slots=True)
class JobEvent:
    """One stored state transition of a job."""

    job_id: int
    at: int
    from_state: JobState | None
    to_state: JobState
    reason: str = ""


@dataclass(frozen=True, slots=True)
class SubmitResult:
    """What a submission did: the job, and whether this call created it."""

    job: Job
    created: bool
