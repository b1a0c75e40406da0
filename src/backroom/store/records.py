"""The plain values that cross the store seam besides the core's: filters, reports, tenants."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from backroom.core.job import JSON, JobState
from backroom.core.lanes import LaneLimits, LaneState
from backroom.core.usage import DailyBudget, UsageTotals


@dataclass(frozen=True, slots=True)
class LaneStatus:
    """One lane as every worker sees it: its limits as last configured, and its state
    refilled to the time asked about, with its calls in flight counted."""

    name: str
    limits: LaneLimits
    state: LaneState


class PauseKind(enum.StrEnum):
    """What a person can pause for every worker: a queue, or an LLM lane."""

    QUEUE = "queue"
    LANE = "lane"


@dataclass(frozen=True, slots=True)
class Pause:
    """A queue or lane paused by a person at `paused_at` (ms since the epoch): no claim
    takes its jobs until it is resumed."""

    kind: PauseKind
    name: str
    paused_at: int


class UsageGrouping(enum.StrEnum):
    """A column a usage report may group calls by."""

    TENANT = "tenant"
    PROVIDER = "provider"
    MODEL = "model"
    PROMPT_VERSION = "prompt_version"
    DAY = "day"


@dataclass(frozen=True, slots=True)
class MetadataKey:
    """Group a usage report by one key of each call's job metadata (`metadata.team`)."""

    key: str

    def __str__(self) -> str:
        return f"metadata.{self.key}"


UsageDimension = UsageGrouping | MetadataKey
"""One thing a usage report groups by."""


@dataclass(frozen=True, slots=True)
class UsageQuery:
    """Calls that ended in `[since, until)` (ms since the epoch), of `tenant` (None:
    every tenant), summed per distinct value of the `group_by` dimensions (at least one)."""

    since: int
    until: int
    group_by: tuple[UsageDimension, ...]
    tenant: str | None = None


@dataclass(frozen=True, slots=True)
class UsageGroup:
    """The totals of one group of a usage report.

    `keys` holds the group's value of each dimension of the query's `group_by`, in
    that order: a name, a UTC date (`YYYY-MM-DD`) for `day`, a metadata value as text
    (a string as it is, anything else as compact JSON); None where a call has none.
    """

    keys: tuple[str | None, ...]
    totals: UsageTotals


@dataclass(frozen=True, slots=True)
class JobFilter:
    """Which jobs `Store.list_jobs` returns, newest first.

    `before_id` is the cursor: only jobs with a smaller id. `tenant=None` means all tenants.
    `created_from`/`created_until` bound the creation time (`[from, until)`, ms since the
    epoch); `search` keeps jobs whose input, metadata or error (class or message)
    contains it, ignoring case.
    """

    tenant: str | None = None
    states: Sequence[JobState] = ()
    queue: str | None = None
    task: str | None = None
    before_id: int | None = None
    limit: int = 50
    created_from: int | None = None
    created_until: int | None = None
    search: str | None = None


@dataclass(frozen=True, slots=True)
class HeartbeatResult:
    """What a heartbeat found: leases it could not extend, and jobs asked to cancel."""

    lost: frozenset[int] = frozenset()
    cancel_requested: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class QueueStats:
    """Health numbers for one queue (or all of them, `queue=None`)."""

    queue: str | None
    queued: int
    running: int
    succeeded: int
    failed: int
    cancelled: int
    oldest_queued_age_ms: int | None
    finished_recently: int = 0
    failed_recently: int = 0

    @property
    def failure_rate(self) -> float:
        """The share of jobs that finished in the recent window and failed."""
        if self.finished_recently == 0:
            return 0.0
        return self.failed_recently / self.finished_recently


@dataclass(frozen=True, slots=True)
class JobCount:
    """How many jobs of one queue and tenant are in one state; of the queued ones, when
    the oldest due one was due (None: none is due, or not queued); how many of them
    finished in the recent window `job_counts` was asked for."""

    queue: str
    tenant: str
    state: JobState
    jobs: int
    oldest_due: int | None = None
    finished_recently: int = 0


def queue_stats_of(counts: Sequence[JobCount], now: int) -> list[QueueStats]:
    """Each queue's `QueueStats` added up from its `job_counts`, by queue: what `stats`
    reads, without a second pass over the jobs."""
    by_queue: dict[str, dict[str, Any]] = {}
    for count in counts:
        entry = by_queue.setdefault(
            count.queue, {"oldest_due": None, "recent": 0, "recent_failures": 0}
        )
        entry[str(count.state)] = entry.get(str(count.state), 0) + count.jobs
        entry["recent"] += count.finished_recently
        if count.state is JobState.FAILED:
            entry["recent_failures"] += count.finished_recently
        oldest = entry["oldest_due"]
        if count.oldest_due is not None and (oldest is None or count.oldest_due < oldest):
            entry["oldest_due"] = count.oldest_due
    return [
        QueueStats(
            queue,
            queued=entry.get("queued", 0),
            running=entry.get("running", 0),
            succeeded=entry.get("succeeded", 0),
            failed=entry.get("failed", 0),
            cancelled=entry.get("cancelled", 0),
            oldest_queued_age_ms=None if entry["oldest_due"] is None else now - entry["oldest_due"],
            finished_recently=entry["recent"],
            failed_recently=entry["recent_failures"],
        )
        for queue, entry in sorted(by_queue.items())
    ]


@dataclass(frozen=True, slots=True)
class TaskBacklog:
    """One task's queued jobs: how many, and the age of the oldest due one (None: none
    is due yet). A backlog that only grows names a task no running worker has."""

    task: str
    queued: int
    oldest_due_age_ms: int | None


@dataclass(frozen=True, slots=True)
class OnceRecord:
    """A stored `ctx.once` entry: `done` is False while the effect is in flight."""

    done: bool
    result: JSON = None


@dataclass(frozen=True, slots=True)
class RedriveFilter:
    """Which failed jobs a bulk redrive sends back; empty fields match everything."""

    tenant: str | None = None
    task: str | None = None
    queue: str | None = None
    job_ids: Sequence[int] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class Tenant:
    """A customer of the service: its name, caps, and whether its keys are admin keys.

    `max_queued` caps the tenant's jobs that are queued or running (None: no cap);
    `daily_budget` caps its LLM spend per UTC day (None: no cap);
    `max_job_cost_pico_usd` caps what one of its jobs' LLM calls may cost together,
    for a job that sets no `max_cost_usd` of its own (None: no cap).
    """

    name: str
    created_at: int
    max_queued: int | None = None
    admin: bool = False
    daily_budget: DailyBudget | None = None
    max_job_cost_pico_usd: int | None = None


KEY_ID_LENGTH = 12


@dataclass(frozen=True, slots=True)
class KeyInfo:
    """One API key as listed: its stored hash (never the key) and when it was made and revoked.

    Its id, `key_id`, is the first `KEY_ID_LENGTH` hex digits of the hash.
    """

    key_hash: str
    created_at: int
    revoked_at: int | None = None
    read_only: bool = False

    @property
    def key_id(self) -> str:
        """The short id a person uses for this key (a prefix of its hash)."""
        return self.key_hash[:KEY_ID_LENGTH]


@dataclass(frozen=True, slots=True)
class KeyHolder:
    """Whom an API key lets in: its tenant, and whether the key may only look (`read_only`:
    it reads every job of its tenant but submits, cancels and redrives none)."""

    tenant: Tenant
    read_only: bool = False
