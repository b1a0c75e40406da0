"""Provider batches as values: a batch of offloaded jobs sent through a provider's batch API.

    intent --submitted--> open --closed--> closed
       \\------------------(nothing sent)--/

A batch is stored as an `intent` (its name, provider and lane, and the jobs it holds)
before anything is uploaded, and becomes `open` once the provider's id is stored; it
is `closed` when every job it held has been finished or sent back. An offloaded job
stays `running` under its last lease token, holding no worker and no lease that can
expire (see `backroom.llm.batch`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from backroom.core.job import JSON, JobState, Lease
from backroom.core.outcome import Outcome
from backroom.core.spend import BudgetWindow, CallIntent
from backroom.core.usage import AttemptUsage


class BatchPhase(enum.StrEnum):
    """Where backroom's record of a provider batch is."""

    INTENT = "intent"
    OPEN = "open"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class BatchCounts:
    """How many of a batch's lines succeeded, failed, or are still to run."""

    total: int = 0
    succeeded: int = 0
    failed: int = 0

    @property
    def pending(self) -> int:
        """Lines with no result yet.

        >>> BatchCounts(total=10, succeeded=6, failed=1).pending
        3
        """
        return max(self.total - self.succeeded - self.failed, 0)


@dataclass(frozen=True, slots=True)
class ProviderBatch:
    """One provider batch as stored.

    `due_at` is when a poller should next look at it: its next poll while open, or,
    for an intent, when its submitter's hold runs out and another may recover it.
    """

    id: int
    name: str
    provider: str
    lane: str
    phase: BatchPhase
    provider_batch_id: str | None
    provider_status: str | None
    counts: BatchCounts
    polls: int
    created_at: int
    updated_at: int
    due_at: int

    def document(self) -> JSON:
        """The batch as a job document and `GET /v1/batches` show it."""
        counts = self.counts
        return {
            "id": self.provider_batch_id,
            "batch": self.id,
            "name": self.name,
            "provider": self.provider,
            "lane": self.lane,
            "phase": str(self.phase),
            "status": self.provider_status or str(self.phase),
            "counts": {
                "total": counts.total,
                "succeeded": counts.succeeded,
                "failed": counts.failed,
                "pending": counts.pending,
            },
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


@dataclass(frozen=True, slots=True)
class LineEnd:
    """How one offloaded job ends: its outcome under its lease and, with `settles`, its
    call closed (billed with `usage` when the line ran, unbilled when it is None).

    Without an `outcome` the job is left as it is and only its call is settled: the
    line of a job cancelled while in its batch, whose result the provider billed.
    """

    lease: Lease
    outcome: Outcome | None
    usage: AttemptUsage | None = None
    settles: bool = True

    def __post_init__(self) -> None:
        usage, lease = self.usage, self.lease
        if usage is not None and (usage.job_id, usage.lease_token) != (lease.job_id, lease.token):
            raise ValueError(f"a line's usage must be that of its own claim, {lease}: {usage}")


@dataclass(frozen=True, slots=True)
class HandOff:
    """One job handed to batch offload: its call's reservation (`intent`, under the
    tenant's `budget` window if it has one) and the lane whose batch its line joins."""

    lease: Lease
    lane: str
    intent: CallIntent
    budget: BudgetWindow | None = None


@dataclass(frozen=True, slots=True)
class LineJob:
    """An offloaded job as the write-back of its batch line reads it: the columns that
    end it, not a whole `Job` (`BatchStore.batch_line_jobs`).

    `line_token` is the lease token its line was sent under; `input` the job's input
    as submitted (valid: the attempt that sent the line parsed it).
    """

    id: int
    line_token: int
    state: JobState
    lease_token: int
    attempt: int
    max_attempts: int
    tenant: str
    lane: str | None
    metadata: JSON
    input: JSON

    @property
    def waiting(self) -> bool:
        """Whether the job still waits for its line: running under the line's token."""
        return self.state is JobState.RUNNING and self.lease_token == self.line_token

    @property
    def attempts_left(self) -> int:
        """How many more attempts the job may start."""
        return max(0, self.max_attempts - self.attempt)

    @property
    def lease(self) -> Lease:
        """The lease the job is held under now."""
        return Lease(self.id, self.lease_token, self.attempt)
