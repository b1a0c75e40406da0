"""The history tables: attempt rows and transition events, written in batches."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from backroom.core.job import AttemptOutcome, ErrorInfo, Job, JobEvent
from backroom.store.rows import error_columns

_INSERT_EVENT = (
    "INSERT INTO job_events (job_id, at, from_state, to_state, reason) VALUES (?, ?, ?, ?, ?)"
)

_OPEN_ATTEMPT = (
    "INSERT INTO attempts (job_id, number, lease_token, worker_id, started_at) "
    "VALUES (?, ?, ?, ?, ?)"
)

_CLOSE_ATTEMPT = """
UPDATE attempts
SET finished_at = ?, outcome = ?, error_kind = ?, error_message = ?, next_attempt_at = ?
WHERE job_id = ? AND lease_token = ?
"""


def record_events(connection: sqlite3.Connection, events: Iterable[JobEvent]) -> None:
    """Store transitions in the job_events table."""
    connection.executemany(
        _INSERT_EVENT,
        (
            (event.job_id, event.at, event.from_state, event.to_state, event.reason)
            for event in events
        ),
    )


def open_attempts(connection: sqlite3.Connection, claimed: Sequence[Job]) -> None:
    """Start an attempt row for each just-claimed job, keyed by its lease token."""
    connection.executemany(
        _OPEN_ATTEMPT,
        ((job.id, job.attempt, job.lease_token, job.worker_id, job.started_at) for job in claimed),
    )


@dataclass(frozen=True, slots=True)
class AttemptEnd:
    """How one attempt, named by its job and lease token, ended."""

    job_id: int
    lease_token: int
    outcome: AttemptOutcome
    error: ErrorInfo | None = None
    next_attempt_at: int | None = None


def close_attempts(connection: sqlite3.Connection, ends: Iterable[AttemptEnd], now: int) -> None:
    """Record at `now` how each attempt ended."""
    connection.executemany(
        _CLOSE_ATTEMPT,
        (
            (
                now,
                end.outcome,
                *error_columns(end.error),
                end.next_attempt_at,
                end.job_id,
                end.lease_token,
            )
            for end in ends
        ),
    )
