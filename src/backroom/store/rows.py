"""How core values become table rows and back, shared by every SQL backend.

JSON values are stored as compact text; an error is two columns (`error_kind`,
`error_message`). What a transition writes is the core's (`backroom.core.lifecycle`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import repeat
from typing import Any, Protocol

from backroom.core.job import (
    JSON,
    Attempt,
    AttemptOutcome,
    ErrorInfo,
    Job,
    JobEvent,
    JobState,
    NewJob,
    WaitReason,
)
from backroom.core.job_batch import NewJobs
from backroom.core.json_text import text_encoder
from backroom.core.usage import DailyBudget
from backroom.store.records import JobCount, Pause, PauseKind, QueueStats, TaskBacklog, Tenant


class Row(Protocol):
    """A database row whose columns can be read by name (sqlite3.Row, asyncpg.Record)."""

    def __getitem__(self, key: str, /) -> Any:
        """The value of column `key`."""


_COMPACT_JSON = text_encoder(sort_keys=False, ensure_ascii=True, allow_nan=True)


def dump_json(value: JSON) -> str:
    """`value` as compact JSON text."""
    # The commonest values of a bulk submission (an id as input, no metadata) skip the
    # encoder's machinery, a few microseconds a job.
    if type(value) is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    if type(value) is dict and not value:
        return "{}"
    return _COMPACT_JSON(value)


def new_job_values(new: NewJob, now: int) -> tuple[Any, ...]:
    """The values of a new job's row, in the order of `NEW_JOB_COLUMNS`."""
    return (
        new.tenant,
        new.task,
        new.queue,
        new.priority,
        dump_json(new.input),
        new.max_attempts,
        new.timeout_ms,
        new.run_at,
        now,
        now,
        new.idempotency_key,
        new.fingerprint,
        dump_json(new.metadata),
        new.lane,
        new.webhook_url,
        new.traceparent,
    )


def new_job_rows(jobs: Sequence[NewJob], now: int) -> list[tuple[Any, ...]]:
    """`new_job_values` of each job; a `NewJobs`' read from its columns, no job built."""
    if not isinstance(jobs, NewJobs):
        return [new_job_values(new, now) for new in jobs]
    t = jobs.template
    count = len(jobs)
    metadata = dump_json(t.metadata)
    return [
        (
            t.tenant,
            t.task,
            t.queue,
            t.priority,
            dump_json(input),
            t.max_attempts,
            t.timeout_ms,
            t.run_at,
            now,
            now,
            key,
            fingerprint,
            metadata,
            lane,
            t.webhook_url,
            t.traceparent,
        )
        for input, key, fingerprint, lane in zip(
            jobs.inputs,
            jobs.keys or repeat(t.idempotency_key, count),
            jobs.fingerprints or repeat(t.fingerprint, count),
            jobs.lanes or repeat(t.lane, count),
            strict=True,
        )
    ]


NEW_JOB_COLUMNS = (
    "tenant, task, queue, priority, input, max_attempts, timeout_ms, run_at, created_at, "
    "updated_at, idempotency_key, fingerprint, metadata, lane, webhook_url, traceparent"
)
"""The columns a new job's row sets besides its state (`new_job_values`)."""


def dump_nullable_json(value: JSON) -> str | None:
    """`value` as compact JSON text, with None stored as SQL NULL."""
    return None if value is None else dump_json(value)


def load_json(text: str | None) -> JSON:
    """The value stored as JSON `text`; SQL NULL reads as None."""
    if text is None:
        return None
    if text == "{}":  # the usual metadata: skip the parser
        return {}
    return json.loads(text)


def error_columns(error: ErrorInfo | None) -> tuple[str | None, str | None]:
    """The (error_kind, error_message) columns for `error`."""
    if error is None:
        return None, None
    return error.kind, error.message


def load_error(row: Row) -> ErrorInfo | None:
    """The error stored in a row's error_kind and error_message columns."""
    kind = row["error_kind"]
    if kind is None:
        return None
    return ErrorInfo(kind, row["error_message"] or "")


_STATES = {state.value: state for state in JobState}


def job_state(text: str) -> JobState:
    """The `JobState` stored as `text` (a dict lookup: the enum's call costs ~1 us).

    >>> job_state("queued")
    <JobState.QUEUED: 'queued'>
    """
    return _STATES[text]


class _Filling:
    """A `Job` while `job_from_row` fills it: the same slots, in the same order, set
    plainly. The frozen dataclass sets each through `object.__setattr__` in `__init__`
    (or a slot's descriptor call each, ~3 us a row); this sets them as attributes
    (~0.8 us) and then makes the instance the `Job` it now is (`__class__` may change
    between classes of one layout). `Job` has no `__post_init__` to skip (`test_job_rows`
    holds both ways to the same job)."""

    __slots__ = Job.__slots__


def job_from_row(row: Row) -> Job:
    """The `Job` a row of the jobs table holds."""
    job: Any = object.__new__(_Filling)
    job.id, job.tenant, job.task = row["id"], row["tenant"], row["task"]
    job.queue, job.priority, job.state = row["queue"], row["priority"], _STATES[row["state"]]
    job.input, job.attempt = load_json(row["input"]), row["attempt"]
    job.max_attempts, job.timeout_ms = row["max_attempts"], row["timeout_ms"]
    job.run_at, job.created_at, job.updated_at = row["run_at"], row["created_at"], row["updated_at"]
    job.started_at, job.finished_at = row["started_at"], row["finished_at"]
    job.idempotency_key, job.fingerprint = row["idempotency_key"], row["fingerprint"]
    job.lease_token, job.lease_expires_at = row["lease_token"], row["lease_expires_at"]
    job.worker_id, job.result, job.error = row["worker_id"], load_json(row["result"]), None
    if row["error_kind"] is not None:
        job.error = ErrorInfo(row["error_kind"], row["error_message"] or "")
    job.progress, job.partial = row["progress"], load_json(row["partial"])
    job.cancel_requested, job.metadata = bool(row["cancel_requested"]), load_json(row["metadata"])
    job.lane, job.webhook_url, job.traceparent = row["lane"], row["webhook_url"], row["traceparent"]
    wait_reason = row["wait_reason"]
    job.wait_reason = None if wait_reason is None else WaitReason(wait_reason)
    job.waiting_since = row["waiting_since"]
    job.__class__ = Job
    return job  # type: ignore[no-any-return]


def attempt_from_row(row: Row) -> Attempt:
    """The `Attempt` a row of the attempts table holds."""
    outcome = row["outcome"]
    return Attempt(
        job_id=row["job_id"],
        number=row["number"],
        worker_id=row["worker_id"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        outcome=None if outcome is None else AttemptOutcome(outcome),
        error=load_error(row),
        next_attempt_at=row["next_attempt_at"],
        lane=row["lane"],
        lease_token=row["lease_token"],
    )


def event_from_row(row: Row) -> JobEvent:
    """The `JobEvent` a row of the job_events table holds."""
    source = row["from_state"]
    return JobEvent(
        job_id=row["job_id"],
        at=row["at"],
        from_state=None if source is None else JobState(source),
        to_state=JobState(row["to_state"]),
        reason=row["reason"],
    )


def tenant_from_row(row: Row) -> Tenant:
    """The `Tenant` a row of the tenants table holds."""
    budget = row["daily_budget_pico_usd"]
    return Tenant(
        name=row["name"],
        created_at=row["created_at"],
        max_queued=row["max_queued"],
        admin=bool(row["admin"]),
        daily_budget=None if budget is None else DailyBudget(budget),
        max_job_cost_pico_usd=row["max_job_cost_pico_usd"],
    )


def budget_column(budget: DailyBudget | None) -> int | None:
    """The `daily_budget_pico_usd` column of a tenant's row with this budget."""
    return None if budget is None else budget.limit_pico_usd


def task_backlog_from_row(row: Row, now: int) -> TaskBacklog:
    """A `TaskBacklog` from a row of (task, queued, oldest_due), as of `now`."""
    oldest = row["oldest_due"]
    return TaskBacklog(row["task"], row["queued"], None if oldest is None else now - oldest)


def queue_stats_from_row(row: Row, now: int) -> QueueStats:
    """One queue's `QueueStats` from a row of either store's stats query."""
    oldest_due = row["oldest_due"]
    return QueueStats(
        queue=row["queue"],
        queued=row["queued"],
        running=row["running"],
        succeeded=row["succeeded"],
        failed=row["failed"],
        cancelled=row["cancelled"],
        oldest_queued_age_ms=None if oldest_due is None else now - oldest_due,
        finished_recently=row["finished_recently"],
        failed_recently=row["failed_recently"],
    )


def pause_from_row(row: Row) -> Pause:
    """A `pauses` row as a `Pause`."""
    return Pause(PauseKind(row["kind"]), row["name"], int(row["paused_at"]))


def job_count_from_row(row: Row) -> JobCount:
    """A `queue, tenant, state, jobs, oldest_due, finished_recently` row as a `JobCount`."""
    oldest_due = row["oldest_due"]
    return JobCount(
        row["queue"],
        row["tenant"],
        JobState(row["state"]),
        int(row["jobs"]),
        None if oldest_due is None else int(oldest_due),
        int(row["finished_recently"]),
    )
