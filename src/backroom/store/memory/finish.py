"""Ending attempts in memory: apply each outcome only if its lease is still held."""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core.job import JobState, Lease
from backroom.core.outcome import Outcome
from backroom.store.memory.history import close_attempt, record_event
from backroom.store.memory.tables import JobRow, MemoryTables
from backroom.store.rows import OutcomeWrite, error_columns, outcome_write


def _apply(tables: MemoryTables, row: JobRow, write: OutcomeWrite, now: int) -> None:
    """Write one outcome to its job's row, the attempt it ends and the job's events."""
    with tables.changing(row):
        row.state = write.state
        row.result = write.result
        if not write.keeps_error:
            row.error_kind, row.error_message = error_columns(write.error)
        if write.run_at is not None:
            row.run_at = write.run_at
        row.finished_at = write.finished_at
        row.attempt -= write.attempt_refund
        row.lease_expires_at = row.worker_id = None
        row.updated_at = now
    close_attempt(
        tables, row, write.attempt_outcome, write.attempt_error, write.next_attempt_at, now
    )
    record_event(tables, row.id, now, JobState.RUNNING, write.state, write.reason)


def finish(tables: MemoryTables, results: Sequence[tuple[Lease, Outcome]], now: int) -> list[bool]:
    """Apply each outcome whose lease is still held; True where it was applied.

    Every outcome takes its job out of `running`, so a lease named twice in one batch
    applies once.
    """
    applied: list[bool] = []
    for lease, outcome in results:
        row = tables.held(lease)
        applied.append(row is not None)
        if row is not None:
            attempts_left = row.max_attempts - row.attempt
            write = outcome_write(
                outcome, attempts_left, now, cancel_requested=row.cancel_requested
            )
            _apply(tables, row, write, now)
    return applied
