"""Reads of the queues as a whole on the memory tables (`MemoryInsight`), with the
SQL stores' semantics and order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from backroom.core.job import TERMINAL_STATES, Job, JobState
from backroom.core.usage import AttemptUsage
from backroom.store.insight_protocol import DeadLetterGroup, FinishedCount, QueueDepth
from backroom.store.memory.feed import forget_jobs
from backroom.store.memory.part import MemoryPart
from backroom.store.memory.retention import unread_jobs
from backroom.store.memory.tables import JobRow
from backroom.store.rows import job_from_row

_ACTIVE = (JobState.QUEUED, JobState.RUNNING)


def _depth(queue: str, rows: list[JobRow], now: int) -> QueueDepth:
    due = [row.run_at for row in rows if row.state is JobState.QUEUED and row.run_at <= now]
    return QueueDepth(
        queue,
        sum(row.state is JobState.QUEUED for row in rows),
        sum(row.state is JobState.RUNNING for row in rows),
        min(due, default=None),
    )


class MemoryInsight(MemoryPart):
    """Reads of the queues as a whole (see `InsightStore`)."""

    def _rows(self, tenant: str | None) -> list[JobRow]:
        return [row for row in self._tables.jobs.values() if tenant in (None, row.tenant)]

    async def queue_depths(self, now: int, tenant: str | None) -> list[QueueDepth]:
        """Per queue with queued or running jobs, by name."""
        by_queue: dict[str, list[JobRow]] = {}
        for row in self._rows(tenant):
            if row.state in _ACTIVE:
                by_queue.setdefault(row.queue, []).append(row)
        return [_depth(queue, by_queue[queue], now) for queue in sorted(by_queue)]

    async def finished_counts(
        self, since: int, slot_ms: int, tenant: str | None
    ) -> list[FinishedCount]:
        """Jobs that ended at or after `since`, per queue, slot and state."""
        counts = Counter(
            (row.queue, since + (row.finished_at - since) // slot_ms * slot_ms, str(row.state))
            for row in self._rows(tenant)
            if row.state in TERMINAL_STATES
            and row.finished_at is not None
            and row.finished_at >= since
        )
        return [
            FinishedCount(queue, slot, JobState(state), counts[queue, slot, state])
            for queue, slot, state in sorted(counts)
        ]

    async def dead_letter_groups(self, tenant: str | None) -> list[DeadLetterGroup]:
        """Failed jobs grouped by task and error class, largest group first."""
        groups: dict[tuple[str, str | None], list[JobRow]] = {}
        for row in self._rows(tenant):
            if row.state is JobState.FAILED:
                groups.setdefault((row.task, row.error_kind), []).append(row)
        ordered = sorted(
            groups.items(), key=lambda item: (-len(item[1]), item[0][0], item[0][1] or "")
        )
        return [
            DeadLetterGroup(task, kind, len(rows), rows[-1].id, rows[-1].error_message)
            for (task, kind), rows in ordered
        ]

    async def running_jobs(self, tenant: str | None, limit: int) -> list[Job]:
        """Up to `limit` running jobs, the lease that ends first first."""
        running = [row for row in self._rows(tenant) if row.state is JobState.RUNNING]
        running.sort(key=lambda row: (row.lease_expires_at or 0, row.id))
        return [job_from_row(row) for row in running[:limit]]

    async def delete_jobs(self, job_ids: Sequence[int], tenant: str | None) -> int:
        """Delete the finished jobs among `job_ids` of `tenant`; how many."""
        unread = unread_jobs(self._tables)
        doomed = [
            job_id
            for job_id in dict.fromkeys(job_ids)
            if (row := self._tables.jobs.get(job_id)) is not None
            and tenant in (None, row.tenant)
            and row.state in TERMINAL_STATES
            and job_id not in unread
        ]
        for job_id in doomed:
            self._tables.delete_job(job_id)
        if doomed:
            forget_jobs(self._tables)
        return len(doomed)

    async def attempt_usages(self, job_id: int) -> list[AttemptUsage]:
        """What each LLM call of the job used and cost, oldest claim first."""
        calls = self._tables.usage.get(job_id, {})
        return [calls[token] for token in sorted(calls)]
