"""Leases in memory: extending them, and sweeping the expired ones."""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core import transitions
from backroom.core.job import Job, Lease
from backroom.store.memory.history import facts_of, write_transition
from backroom.store.memory.tables import JobRow, MemoryTables
from backroom.store.protocol import HeartbeatResult
from backroom.store.rows import job_from_row


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
        write_transition(tables, row, transitions.expired(now, facts_of(row)))
    return [job_from_row(row) for row in expired]
