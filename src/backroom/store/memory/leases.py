"""Leases in memory: extending them, and sweeping the expired ones."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from backroom.core import transitions
from backroom.core.job import Job, JobState, Lease
from backroom.core.outcome import Outcome
from backroom.store.memory import claim as claim_memory
from backroom.store.memory import finish as finish_memory
from backroom.store.memory import queries
from backroom.store.memory.history import facts_of, write_transition
from backroom.store.memory.part import MemoryPart
from backroom.store.memory.tables import JobRow, MemoryTables
from backroom.store.protocol import HeartbeatResult
from backroom.store.rows import job_from_row


def _heartbeat(
    tables: MemoryTables, leases: Sequence[Lease], lease_ms: int, now: int
) -> HeartbeatResult:
    """Extend every lease still held; report the lost ones and pending cancellations."""
    extended: dict[int, JobRow] = {}
    for lease in leases:
        row = tables.held(lease)
        if row is not None:  # a job offloaded to a batch (no worker) keeps no expiry
            row.lease_expires_at = None if row.worker_id is None else now + lease_ms
            row.updated_at = now
            extended[row.id] = row
    return HeartbeatResult(
        lost=frozenset(lease.job_id for lease in leases) - extended.keys(),
        cancel_requested=frozenset(row.id for row in extended.values() if row.cancel_requested),
    )


def _expire_leases(tables: MemoryTables, now: int, limit: int) -> list[Job]:
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


class MemoryLeases(MemoryPart):
    """Claiming jobs and ending their attempts under leases (see `LeaseStore`)."""

    async def claim(
        self,
        queues: Sequence[str],
        limit: int,
        worker_id: str,
        lease_ms: int,
        now: int,
        tasks: Collection[str] | None = None,
    ) -> list[Job]:
        """Take up to `limit` due queued jobs of `tasks` (None: any) from `queues` (all
        queues if empty)."""
        if limit <= 0 or (tasks is not None and not tasks):
            return []
        names = tuple(queues)
        chosen = None if tasks is None else tuple(sorted(tasks))
        return claim_memory.claim(self._tables, names, limit, worker_id, lease_ms, now, chosen)

    async def heartbeat(self, leases: Sequence[Lease], lease_ms: int, now: int) -> HeartbeatResult:
        """Extend the leases still held; report the lost ones and pending cancellations."""
        return _heartbeat(self._tables, leases, lease_ms, now)

    async def finish(self, results: Sequence[tuple[Lease, Outcome]], now: int) -> list[bool]:
        """Apply each attempt's outcome if its lease is still held; True where applied."""
        applied = finish_memory.finish(self._tables, results, now)
        if any(transition and transition.target is JobState.QUEUED for transition in applied):
            self._new_work.announce()
        return [transition is not None for transition in applied]

    async def expire_leases(self, now: int, limit: int = 1000) -> list[Job]:
        """Return jobs whose lease expired to the queue (an attempt used) or fail them."""
        expired = _expire_leases(self._tables, now, limit)
        if any(job.state is JobState.QUEUED for job in expired):
            self._new_work.announce()
        return expired

    async def next_wakeup(
        self, queues: Sequence[str], tasks: Collection[str] | None = None
    ) -> int | None:
        """The earliest queued due time or running lease expiry in `queues` of `tasks`."""
        return queries.next_wakeup(self._tables, queues, tasks)

    def on_new_work(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the event loop after this store queues claimable work."""
        self._new_work.add(callback)

    def commit_watch(self) -> Callable[[], bool] | None:
        """None: only this process writes to a memory database, and it announces its work."""
        return None
