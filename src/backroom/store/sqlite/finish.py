"""Ending attempts: apply a batch of outcomes, each only if its lease is still held.

This is the worker's hot path, so a whole batch costs a fixed number of statements:
one read of the leases still held, then one `executemany` each for the jobs, their
attempt rows and their events. Under the write lock nothing can change between the
read and the writes, so the read decides exactly which outcomes apply.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from backroom.core.job import JobEvent, JobState, Lease
from backroom.core.outcome import Outcome
from backroom.store.rows import OutcomeWrite, dump_json, error_columns, outcome_write
from backroom.store.sqlite.history import AttemptEnd, close_attempts, record_events

_HELD = """
SELECT id, lease_token, max_attempts - attempt AS attempts_left, cancel_requested FROM jobs
WHERE state = 'running' AND id IN (SELECT value FROM json_each(?))
"""

_FINISH_JOB = """
UPDATE jobs
SET state = :state, result = :result,
    error_kind = CASE WHEN :keeps_error THEN error_kind ELSE :error_kind END,
    error_message = CASE WHEN :keeps_error THEN error_message ELSE :error_message END,
    run_at = COALESCE(:run_at, run_at), finished_at = :finished_at,
    attempt = attempt - :attempt_refund,
    lease_expires_at = NULL, worker_id = NULL, updated_at = :now
WHERE id = :job_id AND lease_token = :lease_token AND state = 'running'
"""


def _job_parameters(lease: Lease, write: OutcomeWrite, now: int) -> dict[str, Any]:
    error_kind, error_message = error_columns(write.error)
    return {
        "state": write.state,
        "result": write.result,
        "keeps_error": write.keeps_error,
        "error_kind": error_kind,
        "error_message": error_message,
        "run_at": write.run_at,
        "finished_at": write.finished_at,
        "attempt_refund": write.attempt_refund,
        "now": now,
        "job_id": lease.job_id,
        "lease_token": lease.token,
    }


def finish(
    connection: sqlite3.Connection, results: Sequence[tuple[Lease, Outcome]], now: int
) -> list[bool]:
    """Apply each outcome whose lease is still held; True where it was applied."""
    job_ids = dump_json([lease.job_id for lease, _ in results])
    held_by_lease = {
        (row["id"], row["lease_token"]): (row["attempts_left"], bool(row["cancel_requested"]))
        for row in connection.execute(_HELD, (job_ids,))
    }
    applied: list[tuple[Lease, OutcomeWrite]] = []
    held: list[bool] = []
    for lease, outcome in results:
        # pop: a lease named twice in one batch applies once.
        found = held_by_lease.pop((lease.job_id, lease.token), None)
        held.append(found is not None)
        if found is not None:
            attempts_left, cancel_requested = found
            write = outcome_write(outcome, attempts_left, now, cancel_requested=cancel_requested)
            applied.append((lease, write))
    connection.executemany(
        _FINISH_JOB, (_job_parameters(lease, write, now) for lease, write in applied)
    )
    close_attempts(
        connection,
        (
            AttemptEnd(
                lease.job_id,
                lease.token,
                write.attempt_outcome,
                write.attempt_error,
                write.next_attempt_at,
            )
            for lease, write in applied
        ),
        now,
    )
    record_events(
        connection,
        (
            JobEvent(lease.job_id, now, JobState.RUNNING, write.state, write.reason)
            for lease, write in applied
        ),
    )
    return held
