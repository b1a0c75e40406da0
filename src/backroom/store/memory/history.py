"""The history tables in memory: attempt rows and transition events."""

from __future__ import annotations

from backroom.core.job import AttemptOutcome, ErrorInfo, JobEvent, JobState
from backroom.store.memory.tables import AttemptRow, JobRow, MemoryTables
from backroom.store.rows import error_columns


def record_event(
    tables: MemoryTables,
    job_id: int,
    at: int,
    from_state: JobState | None,
    to_state: JobState,
    reason: str,
) -> None:
    """Store one transition of a job."""
    tables.events.setdefault(job_id, []).append(JobEvent(job_id, at, from_state, to_state, reason))


def open_attempt(tables: MemoryTables, row: JobRow) -> None:
    """Start an attempt row for a just-claimed job, keyed by its lease token."""
    assert row.worker_id is not None and row.started_at is not None  # set by the claim
    attempt = AttemptRow(row.id, row.attempt, row.lease_token, row.worker_id, row.started_at)
    tables.attempts.setdefault(row.id, []).append(attempt)


def close_attempt(
    tables: MemoryTables,
    row: JobRow,
    outcome: AttemptOutcome,
    error: ErrorInfo | None,
    next_attempt_at: int | None,
    now: int,
) -> None:
    """Record at `now` how the attempt under the job's current lease token ended."""
    for attempt in reversed(tables.attempts.get(row.id, ())):
        if attempt.lease_token == row.lease_token:
            attempt.finished_at = now
            attempt.outcome = outcome
            attempt.error_kind, attempt.error_message = error_columns(error)
            attempt.next_attempt_at = next_attempt_at
            return
