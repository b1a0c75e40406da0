"""The part of the store protocol behind a person watching and tidying the queues
(`InsightStore`): reads of the queues as a whole, and deleting chosen finished jobs.

Each read is bounded by an index on any number of stored jobs: queue depths read the
queued and running jobs only, finish counts the jobs finished in the window asked for,
dead-letter groups the failed jobs only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from backroom.core.job import Job, JobState
from backroom.core.usage import AttemptUsage


@dataclass(frozen=True, slots=True)
class QueueDepth:
    """One queue's waiting and running jobs, and when its oldest due queued job was due
    (None: none is due)."""

    queue: str
    queued: int
    running: int
    oldest_due_at: int | None


@dataclass(frozen=True, slots=True)
class FinishedCount:
    """How many jobs of `queue` ended in `state` in the time slot starting at `slot_start`."""

    queue: str
    slot_start: int
    state: JobState
    count: int


@dataclass(frozen=True, slots=True)
class DeadLetterGroup:
    """Failed jobs of one task with one error class: how many, and the newest one."""

    task: str
    error_kind: str | None
    count: int
    newest_id: int
    newest_message: str | None


class InsightStore(Protocol):
    """Reads of the queues as a whole, and deleting chosen jobs (the dashboard)."""

    async def queue_depths(self, now: int, tenant: str | None) -> list[QueueDepth]:
        """Per queue with queued or running jobs (of `tenant`; None: every tenant), by name."""

    async def finished_counts(
        self, since: int, slot_ms: int, tenant: str | None
    ) -> list[FinishedCount]:
        """Jobs that ended (succeeded, failed, cancelled) at or after `since`, counted per
        queue, state and slot of `slot_ms` from `since`; ordered by queue, slot, state."""

    async def dead_letter_groups(self, tenant: str | None) -> list[DeadLetterGroup]:
        """Failed jobs grouped by task and error class, largest group first."""

    async def running_jobs(self, tenant: str | None, limit: int) -> list[Job]:
        """Up to `limit` running jobs (of `tenant`; None: every tenant), the lease that
        ends first first: what the workers hold now."""

    async def delete_jobs(self, job_ids: Sequence[int], tenant: str | None) -> int:
        """Delete the finished (succeeded, failed, cancelled) jobs among `job_ids` of
        `tenant` (None: any tenant) with their attempts, events, `once` records and
        webhook deliveries; how many were deleted. Queued and running jobs stay, and so
        does a job whose events a durable feed reader (webhook dispatch) has not read,
        as retention keeps it; its usage stays (the spend record)."""

    async def attempt_usages(self, job_id: int) -> list[AttemptUsage]:
        """What each LLM call of the job used and cost, oldest claim first (a redriven
        job's calls before the redrive too)."""
