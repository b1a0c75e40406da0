"""Batches as statement parameters: one array per column, for the SQL's `unnest`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from backroom.core.job import JobState, Lease, NewJob
from backroom.core.outcome import Outcome
from backroom.store.rows import OutcomeWrite, dump_json, error_columns, outcome_write

Columns = list[list[Any]]
"""Parallel arrays, one per column, each with a value per row."""


def submit_columns(jobs: Sequence[NewJob]) -> Columns:
    """The new jobs' columns, in the order `postgres_sql.SUBMIT` expands them."""
    return [
        [new.tenant for new in jobs],
        [new.task for new in jobs],
        [new.queue for new in jobs],
        [new.priority for new in jobs],
        [dump_json(new.input) for new in jobs],
        [new.max_attempts for new in jobs],
        [new.timeout_ms for new in jobs],
        [new.run_at for new in jobs],
        [new.idempotency_key for new in jobs],
        [new.fingerprint for new in jobs],
        [dump_json(new.metadata) for new in jobs],
        [new.lane for new in jobs],
    ]


def _write_row(
    lease: Lease, when_spent: bool | None, when_cancel_requested: bool | None, write: OutcomeWrite
) -> tuple[Any, ...]:
    return (
        lease.job_id,
        lease.token,
        when_spent,
        when_cancel_requested,
        write.state,
        write.result,
        write.keeps_error,
        *error_columns(write.error),
        write.run_at,
        write.finished_at,
        write.attempt_refund,
        write.attempt_outcome,
        *error_columns(write.attempt_error),
        write.next_attempt_at,
        write.reason,
    )


def _write_variants(lease: Lease, outcome: Outcome, now: int) -> list[tuple[Any, ...]]:
    """The rows for one outcome: one write, or one per state of the job it depends on.

    What an outcome writes can depend on whether the job has attempts left and whether
    its cancellation was asked for; only the database knows both. Such an outcome is
    sent once for each (spent, cancel requested) pair, and the SQL joins the row that
    fits the job. Only a write that would queue the job again can depend on them.
    """
    # Any positive count of attempts left gives the same write as any other.
    usual = outcome_write(outcome, attempts_left=1, now=now)
    if usual.state is not JobState.QUEUED:
        return [_write_row(lease, None, None, usual)]
    return [
        _write_row(
            lease,
            spent,
            cancel_requested,
            outcome_write(outcome, 0 if spent else 1, now, cancel_requested=cancel_requested),
        )
        for spent in (False, True)
        for cancel_requested in (False, True)
    ]


def finish_columns(results: Sequence[tuple[Lease, Outcome]], now: int) -> Columns:
    """The outcomes' writes, in the order `postgres_sql.FINISH` expands them."""
    rows = [row for lease, outcome in results for row in _write_variants(lease, outcome, now)]
    return [list(column) for column in zip(*rows, strict=True)]


def lease_columns(leases: Sequence[Lease]) -> Columns:
    """The leases' job ids and tokens."""
    return [[lease.job_id for lease in leases], [lease.token for lease in leases]]


def queue_filter(queues: Sequence[str], parameter: int) -> tuple[str, list[Any]]:
    """An `AND queue ...` condition on parameter `$parameter`, and that parameter.

    No queues means every queue (no condition).
    """
    if not queues:
        return "", []
    return f"AND queue = ANY(${parameter}::text[])", [list(queues)]
