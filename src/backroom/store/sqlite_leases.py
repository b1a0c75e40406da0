"""Leases: claiming due jobs, extending leases, sweeping expired ones (SQL on the store's thread).

A claim adds one to the job's `lease_token`, which never goes back: every later write
from a worker names the token it was given, and a write naming an older one changes
nothing. Each claim is a single `UPDATE ... WHERE id IN (SELECT ... LIMIT n)`, run
under the write lock, so two workers can never both take a job.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from backroom.core.job import AttemptOutcome, Job, JobEvent, JobState, Lease
from backroom.core.transitions import LEASE_EXPIRED
from backroom.store.base import HeartbeatResult
from backroom.store.rows import Reason, dump_json, job_from_row
from backroom.store.sqlite_history import AttemptEnd, close_attempts, open_attempts, record_events
from backroom.store.sqlite_queries import queue_condition

_CLAIM = """
UPDATE jobs
SET state = 'running', attempt = attempt + 1, lease_token = lease_token + 1,
    lease_expires_at = ?, worker_id = ?, started_at = ?, updated_at = ?, cancel_requested = 0
WHERE id IN (
    SELECT id FROM jobs
    WHERE state = 'queued' AND run_at <= ? {queue_condition}
    ORDER BY priority DESC, run_at, id
    LIMIT ?
)
RETURNING *
"""

_HEARTBEAT = """
UPDATE jobs
SET lease_expires_at = ?, updated_at = ?
WHERE state = 'running'
  AND (id, lease_token) IN (
      SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)
  )
RETURNING id, cancel_requested
"""

# Back to the queue with the attempt used up, or failed when it was the last one.
_EXPIRE = """
UPDATE jobs
SET state = CASE WHEN attempt < max_attempts THEN 'queued' ELSE 'failed' END,
    run_at = CASE WHEN attempt < max_attempts THEN :now ELSE run_at END,
    finished_at = CASE WHEN attempt < max_attempts THEN finished_at ELSE :now END,
    error_kind = :error_kind, error_message = :error_message,
    lease_expires_at = NULL, worker_id = NULL, updated_at = :now
WHERE id IN (
    SELECT id FROM jobs
    WHERE state = 'running' AND lease_expires_at <= :now
    ORDER BY lease_expires_at, id
    LIMIT :limit
)
RETURNING *
"""


def _claim_order(job: Job) -> tuple[int, int, int]:
    return (-job.priority, job.run_at, job.id)


def claim(
    connection: sqlite3.Connection,
    queues: Sequence[str],
    limit: int,
    worker_id: str,
    lease_ms: int,
    now: int,
) -> list[Job]:
    """Take up to `limit` due queued jobs from `queues` under fresh leases, in claim order."""
    rows = connection.execute(
        _CLAIM.format(queue_condition=queue_condition(queues)),
        (now + lease_ms, worker_id, now, now, now, *queues, limit),
    ).fetchall()
    # RETURNING gives rows in no promised order.
    claimed = sorted((job_from_row(row) for row in rows), key=_claim_order)
    open_attempts(connection, claimed)
    record_events(
        connection,
        (
            JobEvent(job.id, now, JobState.QUEUED, JobState.RUNNING, Reason.CLAIMED)
            for job in claimed
        ),
    )
    return claimed


def heartbeat(
    connection: sqlite3.Connection, leases: Sequence[Lease], lease_ms: int, now: int
) -> HeartbeatResult:
    """Extend every lease still held; report the lost ones and pending cancellations."""
    held = dump_json([[lease.job_id, lease.token] for lease in leases])
    rows = connection.execute(_HEARTBEAT, (now + lease_ms, now, held)).fetchall()
    extended = {row["id"] for row in rows}
    return HeartbeatResult(
        lost=frozenset(lease.job_id for lease in leases) - extended,
        cancel_requested=frozenset(row["id"] for row in rows if row["cancel_requested"]),
    )


def expire_leases(connection: sqlite3.Connection, now: int, limit: int) -> list[Job]:
    """Requeue (or fail, with no attempts left) up to `limit` jobs whose lease ran out."""
    rows = connection.execute(
        _EXPIRE,
        {
            "now": now,
            "limit": limit,
            "error_kind": LEASE_EXPIRED.kind,
            "error_message": LEASE_EXPIRED.message,
        },
    ).fetchall()
    expired = sorted((job_from_row(row) for row in rows), key=lambda job: job.id)
    close_attempts(
        connection,
        (
            AttemptEnd(
                job.id,
                job.lease_token,
                AttemptOutcome.LEASE_EXPIRED,
                LEASE_EXPIRED,
                job.run_at if job.state is JobState.QUEUED else None,
            )
            for job in expired
        ),
        now,
    )
    record_events(
        connection,
        (JobEvent(job.id, now, JobState.RUNNING, job.state, str(LEASE_EXPIRED)) for job in expired),
    )
    return expired
