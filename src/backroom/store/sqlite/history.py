"""The history tables: attempt rows and transition events, written in batches.

`record_transitions` is the one place every transition's side rows are written: a
side effect of every transition (an event today) is added there.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from backroom.core.job import Job
from backroom.core.lifecycle import Transition
from backroom.store.rows import error_columns
from backroom.store.sqlite.id_floors import largest_id

_INSERT_EVENT = (
    "INSERT INTO job_events (id, job_id, at, from_state, to_state, reason) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)

_OPEN_ATTEMPT = (
    "INSERT INTO attempts (job_id, number, lease_token, worker_id, started_at, lane) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)

_CLOSE_ATTEMPT = """
UPDATE attempts
SET finished_at = ?, outcome = ?, error_kind = ?, error_message = ?, next_attempt_at = ?
WHERE job_id = ? AND lease_token = ?
"""

Moved = tuple[int, Transition]
"""A job id and the transition it went through."""

Ended = tuple[int, int, Transition]
"""A job id, the lease token of the attempt a transition ended, and that transition."""


def record_transitions(connection: sqlite3.Connection, moved: Iterable[Moved]) -> None:
    """Log each job's transition in the job_events table."""
    # Ids given here rather than by SQLite, which could hand out a pruned event's id.
    largest = largest_id(connection, "job_events")
    connection.executemany(
        _INSERT_EVENT,
        (
            (event_id, job_id, change.at, change.source, change.target, change.reason)
            for event_id, (job_id, change) in enumerate(moved, start=largest + 1)
        ),
    )


def open_attempts(connection: sqlite3.Connection, claimed: Sequence[Job]) -> None:
    """Start an attempt row for each just-claimed job, keyed by its lease token."""
    connection.executemany(
        _OPEN_ATTEMPT,
        (
            (job.id, job.attempt, job.lease_token, job.worker_id, job.started_at, job.lane)
            for job in claimed
        ),
    )


def close_attempts(connection: sqlite3.Connection, ended: Iterable[Ended]) -> None:
    """Record how each attempt ended, as the transition that ended it says."""
    connection.executemany(
        _CLOSE_ATTEMPT,
        (
            (
                transition.at,
                end.outcome,
                *error_columns(end.error),
                end.next_attempt_at,
                job_id,
                lease_token,
            )
            for job_id, lease_token, transition in ended
            if (end := transition.attempt_end) is not None
        ),
    )
