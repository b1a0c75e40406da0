"""Leases in memory: extending them, and sweeping the expired ones."""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core.job import AttemptOutcome, Job, JobState, Lease
from backroom.core.transitions import LEASE_EXPIRED
from backroom.store.memory.history import close_attempt, record_event
from backroom.store.memory.tables import JobRow, MemoryTables
from backroom.store.protocol import HeartbeatResult
from backroom.store.rows import error_columns, job_from_row


def heartbeat(
    tables: MemoryTables, leases: Sequence[Lease], lease_ms: int, now: int
) -> HeartbeatResult:
    """Extend every lease still held; report the lost ones and pending cancellations."""
    extended: dict[int, JobRow] = {}
    for lease in leases:
        row = tables.held(lease)
        if row is not None:
            row.lease_expires_at = now + lease_ms
            row.updated_at = now
            extended[row.id] = row
    return HeartbeatResult(
        lost=frozenset(lease.job_id for lease in leases) - extended.keys(),
        cancel_requested=frozenset(row.id for row in extended.values() if row.cancel_requested),
    )


def _expire(tables: MemoryTables, row: JobRow, now: int) -> None:
    """Back to the queue with the attempt used up, or failed when it was the last one,
    or cancelled when that was asked for while it ran."""
    with tables.changing(row):
        if row.cancel_requested:
            row.state, row.finished_at = JobState.CANCELLED, now
        elif row.attempt < row.max_attempts:
            row.state, row.run_at = JobState.QUEUED, now
        else:
            row.state, row.finished_at = JobState.FAILED, now
        row.error_kind, row.error_message = error_columns(LEASE_EXPIRED)
        row.lease_expires_at = row.worker_id = None
        row.updated_at = now
    next_attempt_at = row.run_at if row.state is JobState.QUEUED else None
    close_attempt(tables, row, AttemptOutcome.LEASE_EXPIRED, LEASE_EXPIRED, next_attempt_at, now)
    record_event(tables, row.id, now, JobState.RUNNING, row.state, str(LEASE_EXPIRED))


def expire_leases(tables: MemoryTables, now: int, limit: int) -> list[Job]:
    """Requeue (or fail, with no attempts left) up to `limit` jobs whose lease ran out."""
    ran_out = [
        (row.lease_expires_at, row.id, row)
        for row in tables.running.values()
        if row.lease_expires_at is not None and row.lease_expires_at <= now
    ]
    # The earliest expiries first; a negative limit, as in SQL, means no limit.
    chosen = [entry[-1] for entry in sorted(ran_out, key=lambda entry: entry[:2])]
    expired = sorted(chosen[: limit if limit >= 0 else None], key=lambda row: row.id)
    for row in expired:
        _expire(tables, row, now)
    return [job_from_row(row) for row in expired]
