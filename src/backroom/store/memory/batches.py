"""Provider batches and offloaded jobs' lines in memory (see `BatchStore`).

Each method runs to its end without awaiting, so each is one step, as a transaction is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from backroom.core.errors import LeaseLost, StoreError
from backroom.core.job import Job, JobState, Lease
from backroom.core.provider_batch import (
    BatchCounts,
    BatchPhase,
    HandOff,
    LineEnd,
    LineJob,
    ProviderBatch,
)
from backroom.core.spend import CallOpening, CallState
from backroom.store.memory import finish as finish_memory
from backroom.store.memory.batch_tables import BatchLineRow
from backroom.store.memory.calls import open_call
from backroom.store.memory.part import MemoryPart
from backroom.store.memory.tables import JobRow, MemoryTables
from backroom.store.memory.usage import record_usage_row
from backroom.store.rows import job_from_row, load_json


def _live(tables: MemoryTables, line: BatchLineRow) -> Job | None:
    row = tables.held(Lease(line.job_id, line.lease_token, 0))
    return None if row is None else job_from_row(row)


def _line_job(line_token: int, row: JobRow) -> LineJob:
    return LineJob(
        row.id, line_token, row.state, row.lease_token, row.attempt, row.max_attempts,
        row.tenant, row.lane, load_json(row.metadata), load_json(row.input),
    )  # fmt: skip


def _create(
    tables: MemoryTables,
    batch: tuple[str, str, str],
    leases: Sequence[Lease],
    now: int,
    hold_ms: int,
) -> tuple[ProviderBatch, list[Lease]]:
    name, provider, lane = batch
    store = tables.batches
    if any(found.name == name for found in store.batches.values()):
        raise StoreError(f"a provider batch named {name!r} exists already")
    store.last_batch_id += 1
    kept: list[Lease] = []
    for lease in leases:
        line = store.lines.get((lease.job_id, lease.token))
        if line is not None and line.batch_id is None and _live(tables, line) is not None:
            line.batch_id = store.last_batch_id
            kept.append(lease)
    counts = BatchCounts(total=len(kept))
    created = ProviderBatch(
        store.last_batch_id, name, provider, lane, BatchPhase.INTENT, None, None, counts, 0,
        now, now, now + hold_ms,
    )  # fmt: skip
    store.batches[created.id] = created
    return created, kept


class MemoryBatches(MemoryPart):
    """Provider batches and offloaded jobs' lines (see `BatchStore`)."""

    def _change(self, batch_id: int, **changes: object) -> None:
        found = self._tables.batches.batches.get(batch_id)
        if found is not None and found.phase is not BatchPhase.CLOSED:
            self._tables.batches.batches[batch_id] = dataclasses.replace(found, **changes)  # type: ignore[arg-type]

    async def offload(self, lease: Lease, lane: str, now: int) -> bool:
        """Hand the held job to batch offload: no lease expiry, no worker, a waiting line."""
        row = self._tables.held(lease)
        if row is None:
            return False
        row.lease_expires_at = row.worker_id = None
        row.updated_at = now
        key = (lease.job_id, lease.token)
        self._tables.batches.lines.setdefault(key, BatchLineRow(*key, lane, now))
        return True

    async def batch_hand_off(
        self, hand_offs: Sequence[HandOff], now: int
    ) -> list[CallOpening | None]:
        """Open the calls of held jobs (within budgets) and offload them, in one step."""
        results: list[CallOpening | None] = []
        for hand_off in hand_offs:
            try:
                opening = open_call(self._tables, hand_off.lease, hand_off.intent, hand_off.budget)
            except LeaseLost:
                results.append(None)
                continue
            if opening.opened:
                await self.offload(hand_off.lease, hand_off.lane, now)
            results.append(opening)
        return results

    async def batch_create(
        self,
        name: str,
        provider: str,
        lane: str,
        leases: Sequence[Lease],
        now: int,
        hold_ms: int,
    ) -> tuple[ProviderBatch, list[Lease]]:
        """Store a batch intent holding the still waiting lines of `leases`."""
        return _create(self._tables, (name, provider, lane), leases, now, hold_ms)

    async def batch_submitted(self, batch_id: int, provider_batch_id: str, now: int) -> None:
        """Store the provider's id: the batch is open, due for a poll now."""
        found = self._tables.batches.batches.get(batch_id)
        if found is not None and found.phase is BatchPhase.INTENT:
            self._change(
                batch_id, phase=BatchPhase.OPEN, provider_batch_id=provider_batch_id,
                updated_at=now, due_at=now,
            )  # fmt: skip

    async def batch_polled(
        self, batch_id: int, status: str, counts: BatchCounts, due_at: int, now: int
    ) -> None:
        """Store what a poll saw and when the batch is next due."""
        found = self._tables.batches.batches.get(batch_id)
        polls = 0 if found is None else found.polls + 1
        self._change(
            batch_id, provider_status=status, counts=counts, polls=polls, due_at=due_at,
            updated_at=now,
        )  # fmt: skip

    async def batch_finish(self, ends: Sequence[LineEnd], now: int) -> list[bool]:
        """Settle the ends' calls and apply their outcomes, in one step."""
        for end in ends:
            call = self._tables.calls.get((end.lease.job_id, end.lease.token))
            if end.settles and call is not None and call.state is CallState.OPEN:
                call.state = CallState.SETTLED
                if end.usage is not None:
                    record_usage_row(self._tables, end.usage)
        results = [(end.lease, end.outcome) for end in ends if end.outcome is not None]
        applied = finish_memory.finish(self._tables, results, now)
        if any(transition and transition.target is JobState.QUEUED for transition in applied):
            self._new_work.announce()
        flags = iter(applied)
        return [end.outcome is not None and next(flags) is not None for end in ends]

    async def batch_close(self, batch_id: int, status: str, now: int) -> None:
        """Close the batch; its lines go with it."""
        self._change(batch_id, phase=BatchPhase.CLOSED, provider_status=status, updated_at=now)
        lines = self._tables.batches.lines
        for key in [key for key, line in lines.items() if line.batch_id == batch_id]:
            del lines[key]

    async def batches_due(self, now: int, hold_ms: int, limit: int) -> list[ProviderBatch]:
        """Take up to `limit` due batches, pushing their `due_at` past the hold."""
        due = sorted(
            (b for b in self._tables.batches.batches.values() if b.phase is not BatchPhase.CLOSED),
            key=lambda batch: (batch.due_at, batch.id),
        )
        taken = [batch for batch in due if batch.due_at <= now][:limit]
        for batch in taken:
            self._change(batch.id, due_at=now + hold_ms)
        return sorted(
            (self._tables.batches.batches[batch.id] for batch in taken), key=lambda b: b.id
        )

    async def provider_batches(self, limit: int = 100) -> list[ProviderBatch]:
        """The batches not closed, oldest first."""
        batches = self._tables.batches.batches.values()
        return sorted(
            (batch for batch in batches if batch.phase is not BatchPhase.CLOSED),
            key=lambda batch: batch.id,
        )[:limit]

    async def batch_cancels(self, batch_id: int) -> tuple[list[Lease], bool]:
        """The batch's live jobs asked to cancel, and whether other live jobs are left."""
        lines = self._tables.batches.lines.values()
        found = [_live(self._tables, line) for line in lines if line.batch_id == batch_id]
        live = sorted((job for job in found if job is not None), key=lambda job: job.id)
        asked = [job.lease for job in live if job.cancel_requested]
        return asked, len(asked) < len(live)

    async def batch_line_jobs(self, batch_id: int) -> list[LineJob]:
        """Each line of the batch with its job, whatever the job's state."""
        lines = [line for line in self._tables.batches.lines.values() if line.batch_id == batch_id]
        found = [(line.lease_token, self._tables.jobs.get(line.job_id)) for line in lines]
        jobs = [_line_job(token, row) for token, row in found if row is not None]
        return sorted(jobs, key=lambda job: job.id)

    async def stray_jobs(self, handed_before: int, limit: int) -> list[Job]:
        """Running jobs whose waiting line was handed before `handed_before`."""
        lines = self._tables.batches.lines
        old = [line for line in lines.values() if line.batch_id is None]
        old = [line for line in old if line.handed_at < handed_before]
        found: list[Job] = []
        for line in sorted(old, key=lambda line: line.handed_at):
            job = _live(self._tables, line)
            if job is None:
                del lines[line.job_id, line.lease_token]
            elif len(found) < limit:
                found.append(job)
        return found

    async def adopted_batch_ids(self, provider: str, since: int) -> set[str]:
        """The provider ids stored by `provider`'s batches stored since `since`."""
        return {
            batch.provider_batch_id
            for batch in self._tables.batches.batches.values()
            if batch.provider == provider and batch.created_at >= since and batch.provider_batch_id
        }

    async def job_batch(self, job_id: int) -> ProviderBatch | None:
        """The batch holding the running job's line, or None."""
        for line in self._tables.batches.lines.values():
            if line.job_id == job_id and line.batch_id is not None and _live(self._tables, line):
                return self._tables.batches.batches.get(line.batch_id)
        return None
