"""Read-only calls on the memory tables: jobs, their history, and queue health."""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from backroom.core.job import Attempt, Job, JobEvent, JobState
from backroom.store.memory.lanes import full_lanes
from backroom.store.memory.part import MemoryPart
from backroom.store.memory.tables import DueKey, JobRow, MemoryTables, paused
from backroom.store.protocol import JobFilter, QueueStats
from backroom.store.records import JobCount, PauseKind, TaskBacklog
from backroom.store.rows import (
    attempt_from_row,
    job_count_from_row,
    job_from_row,
    queue_stats_from_row,
)


def visible_row(tables: MemoryTables, job_id: int, tenant: str | None) -> JobRow | None:
    """The job's row, unless it belongs to a tenant other than `tenant`."""
    row = tables.jobs.get(job_id)
    return row if row is not None and tenant in (None, row.tenant) else None


def get_job(tables: MemoryTables, job_id: int, tenant: str | None) -> Job | None:
    """The job with `job_id`, unless it belongs to a tenant other than `tenant`."""
    row = visible_row(tables, job_id, tenant)
    return None if row is None else job_from_row(row)


def _listed(row: JobRow, where: JobFilter) -> bool:
    return (
        where.tenant in (None, row.tenant)
        and where.queue in (None, row.queue)
        and where.task in (None, row.task)
        and (not where.states or row.state in where.states)
        and (where.created_from is None or row.created_at >= where.created_from)
        and (where.created_until is None or row.created_at < where.created_until)
        and (where.search is None or _mentions(row, where.search.lower()))
    )


def _mentions(row: JobRow, text: str) -> bool:
    """Whether the job's input, metadata or error contains `text` (lower case)."""
    error = f"{row.error_kind or ''} {row.error_message or ''}"
    return any(text in field.lower() for field in (row.input, row.metadata, error))


def list_jobs(tables: MemoryTables, where: JobFilter) -> list[Job]:
    """The jobs `where` selects, newest first."""
    newest_first: Iterable[JobRow] = reversed(tables.jobs.values())
    if where.before_id is not None:
        before = where.before_id
        newest_first = itertools.dropwhile(lambda row: row.id >= before, newest_first)
    # A negative limit, as in SQL, means no limit.
    limit = where.limit if where.limit >= 0 else None
    matching = (row for row in newest_first if _listed(row, where))
    return [job_from_row(row) for row in itertools.islice(matching, limit)]


def _attempts(tables: MemoryTables, job_id: int) -> list[Attempt]:
    """Every attempt of the job, oldest first."""
    return [attempt_from_row(row) for row in tables.attempts.get(job_id, ())]


def _events(tables: MemoryTables, job_id: int, after: int) -> list[JobEvent]:
    """The job's transitions after the first `after` of them, oldest first."""
    return tables.events.get(job_id, [])[max(0, after) :]


def _queue_counts(queue: str) -> dict[str, Any]:
    """A stats row of `queue` with nothing counted yet (the SQL query's columns)."""
    counts: dict[str, Any] = {state.value: 0 for state in JobState}
    counts |= {"queue": queue, "oldest_due": None, "finished_recently": 0, "failed_recently": 0}
    return counts


def due_since(row: JobRow, now: int) -> int | None:
    """When a queued job became due: the first due time of one waiting for its lane or
    budget (its due time moved), else its due time if it has come (None: not yet)."""
    if row.waiting_since is not None:
        return row.waiting_since
    return row.run_at if row.run_at <= now else None


def _count(counts: dict[str, Any], row: JobRow, now: int, since: int) -> None:
    counts[row.state.value] += 1
    due = due_since(row, now) if row.state is JobState.QUEUED else None
    if due is not None:
        oldest = counts["oldest_due"]
        counts["oldest_due"] = due if oldest is None else min(oldest, due)
    if row.finished_at is not None and row.finished_at >= since:
        counts["finished_recently"] += 1
        counts["failed_recently"] += row.state is JobState.FAILED


def stats(tables: MemoryTables, now: int, window_ms: int) -> list[QueueStats]:
    """Per-queue counts by state, oldest due queued job, and finishes since `now - window_ms`."""
    by_queue: dict[str, dict[str, Any]] = {}
    for row in tables.jobs.values():
        counts = by_queue.get(row.queue) or by_queue.setdefault(row.queue, _queue_counts(row.queue))
        _count(counts, row, now, now - window_ms)
    return [queue_stats_from_row(by_queue[queue], now) for queue in sorted(by_queue)]


def job_counts(tables: MemoryTables, now: int, window_ms: int) -> list[JobCount]:
    """Jobs by queue, tenant and state, the oldest due queued one, the recent finishes."""
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in tables.jobs.values():
        key = (row.queue, row.tenant, row.state.value)
        group = groups.get(key) or groups.setdefault(
            key, {"jobs": 0, "oldest_due": None, "finished_recently": 0}
        )
        group["jobs"] += 1
        due = due_since(row, now) if row.state is JobState.QUEUED else None
        if due is not None:
            oldest = group["oldest_due"]
            group["oldest_due"] = due if oldest is None else min(oldest, due)
        if row.finished_at is not None and row.finished_at >= now - window_ms:
            group["finished_recently"] += 1
    return [
        job_count_from_row({"queue": key[0], "tenant": key[1], "state": key[2], **groups[key]})
        for key in sorted(groups)
    ]


def count_active(tables: MemoryTables, tenant: str) -> int:
    """How many of the tenant's jobs are queued or running."""
    return tables.active[tenant]


def queued_by_task(tables: MemoryTables, now: int) -> list[TaskBacklog]:
    """Each task with queued jobs: how many, and the age of the oldest due one."""
    counts: dict[str, int] = {}
    oldest: dict[str, int] = {}
    for keys in tables.due.values():
        for _, job_id in keys:
            row = tables.jobs[job_id]
            counts[row.task] = counts.get(row.task, 0) + 1
            due = due_since(row, now)
            if due is not None:
                oldest[row.task] = min(due, oldest.get(row.task, due))
    return [
        TaskBacklog(task, counts[task], None if task not in oldest else now - oldest[task])
        for task in sorted(counts)
    ]


def next_wakeup(
    tables: MemoryTables, queues: Sequence[str], tasks: Collection[str] | None = None
) -> int | None:
    """The earliest due time of a queued job or lease expiry of a running one in `queues`,
    of `tasks` (None: any task).

    As in the SQL stores: a job of a lane paused by a 429 is due when both it and the
    pause are; a job of a lane with no free slot, or of a paused queue or lane, has no
    time of its own.
    """
    chosen = frozenset(queues)
    closed = full_lanes(tables) | paused(tables, PauseKind.LANE)
    stopped = paused(tables, PauseKind.QUEUE)
    times = [
        max(due, _paused_until(tables, lane))
        for (queue, lane), keys in tables.due.items()
        if (not chosen or queue in chosen) and lane not in closed and queue not in stopped
        for due in _first_due(tables, keys, tasks)
    ]
    times += [
        row.lease_expires_at
        for row in tables.running.values()
        if (not chosen or row.queue in chosen)
        and (tasks is None or row.task in tasks)
        and row.lease_expires_at is not None
    ]
    return min(times, default=None)


def _first_due(
    tables: MemoryTables, keys: list[DueKey], tasks: Collection[str] | None
) -> list[int]:
    """The due time of the first of `keys` whose job is of `tasks` (none if no such job)."""
    if tasks is None:
        return [keys[0][0]]
    return next(([run_at] for run_at, job_id in keys if tables.jobs[job_id].task in tasks), [])


def _paused_until(tables: MemoryTables, lane: str | None) -> int:
    state = None if lane is None else tables.lanes.get(lane)
    return 0 if state is None else state.paused_until


class MemoryEvents(MemoryPart):
    """A job's history: its attempts and its transitions (see `EventStore`)."""

    async def attempts(self, job_id: int) -> list[Attempt]:
        """Every attempt of the job, oldest first."""
        return _attempts(self._tables, job_id)

    async def events(self, job_id: int, after: int = 0) -> list[JobEvent]:
        """The job's transitions after the first `after` of them, oldest first."""
        return _events(self._tables, job_id, after)
