"""Reads on SQLite: jobs, their history (`SqliteEvents`), and queue health."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from backroom.core.job import Attempt, Job, JobEvent
from backroom.store.records import JobCount, JobFilter, QueueStats, TaskBacklog
from backroom.store.rows import (
    attempt_from_row,
    dump_json,
    event_from_row,
    job_count_from_row,
    job_from_row,
    queue_stats_from_row,
    task_backlog_from_row,
)
from backroom.store.sqlite.lanes import LANE_USE
from backroom.store.sqlite.part import SqlitePart
from backroom.store.sqlite.pauses import UNPAUSED_LANE, UNPAUSED_QUEUE

# Larger than any job id: the cursor of a first page.
_NO_CURSOR = 2**63 - 1

_LIST_JOBS = """
SELECT * FROM jobs
WHERE id < :before
  AND (:tenant IS NULL OR tenant = :tenant)
  AND (:queue IS NULL OR queue = :queue)
  AND (:task IS NULL OR task = :task)
  AND (:any_state OR state IN (SELECT value FROM json_each(:states)))
  AND (:created_from IS NULL OR created_at >= :created_from)
  AND (:created_until IS NULL OR created_at < :created_until)
  AND (:search IS NULL OR instr(lower(input), :search) OR instr(lower(metadata), :search)
       OR instr(lower(COALESCE(error_kind, '') || ' ' || COALESCE(error_message, '')), :search))
ORDER BY id DESC
LIMIT :limit
"""

_STATS = """
SELECT queue,
       COUNT(*) FILTER (WHERE state = 'queued') AS queued,
       COUNT(*) FILTER (WHERE state = 'running') AS running,
       COUNT(*) FILTER (WHERE state = 'succeeded') AS succeeded,
       COUNT(*) FILTER (WHERE state = 'failed') AS failed,
       COUNT(*) FILTER (WHERE state = 'cancelled') AS cancelled,
       -- A job that could not start (its lane, its budget) waits since it was first due.
       MIN(COALESCE(waiting_since, CASE WHEN run_at <= :now THEN run_at END))
           FILTER (WHERE state = 'queued') AS oldest_due,
       COUNT(*) FILTER (WHERE finished_at >= :since) AS finished_recently,
       COUNT(*) FILTER (WHERE state = 'failed' AND finished_at >= :since) AS failed_recently
FROM jobs
GROUP BY queue
ORDER BY queue
"""


def get_job(connection: sqlite3.Connection, job_id: int, tenant: str | None) -> Job | None:
    """The job with `job_id`, unless it belongs to a tenant other than `tenant`."""
    row = connection.execute(
        "SELECT * FROM jobs WHERE id = :id AND (:tenant IS NULL OR tenant = :tenant)",
        {"id": job_id, "tenant": tenant},
    ).fetchone()
    return None if row is None else job_from_row(row)


def list_jobs(connection: sqlite3.Connection, where: JobFilter) -> list[Job]:
    """The jobs `where` selects, newest first."""
    rows = connection.execute(
        _LIST_JOBS,
        {
            "before": _NO_CURSOR if where.before_id is None else where.before_id,
            "tenant": where.tenant,
            "queue": where.queue,
            "task": where.task,
            "any_state": not where.states,
            "states": dump_json(list(where.states)),
            "limit": where.limit,
            "created_from": where.created_from,
            "created_until": where.created_until,
            "search": None if where.search is None else where.search.lower(),
        },
    )
    return [job_from_row(row) for row in rows]


def _attempts(connection: sqlite3.Connection, job_id: int) -> list[Attempt]:
    """Every attempt of the job, oldest first."""
    rows = connection.execute("SELECT * FROM attempts WHERE job_id = ? ORDER BY id", (job_id,))
    return [attempt_from_row(row) for row in rows]


def _events(connection: sqlite3.Connection, job_id: int, after: int) -> list[JobEvent]:
    """The job's transitions after the first `after` of them, oldest first."""
    rows = connection.execute(
        # Progress events (running to running) are for the feed, not the job's transitions.
        "SELECT * FROM job_events WHERE job_id = ? "
        "AND NOT (from_state = 'running' AND to_state = 'running') ORDER BY id LIMIT -1 OFFSET ?",
        (job_id, after),
    )
    return [event_from_row(row) for row in rows]


def stats(connection: sqlite3.Connection, now: int, window_ms: int) -> list[QueueStats]:
    """Per-queue counts by state, oldest due queued job, and finishes since `now - window_ms`."""
    rows = connection.execute(_STATS, {"now": now, "since": now - window_ms})
    return [queue_stats_from_row(row, now) for row in rows]


_JOB_COUNTS = """
SELECT queue, tenant, state, COUNT(*) AS jobs,
       MIN(COALESCE(waiting_since, CASE WHEN run_at <= :now THEN run_at END))
           FILTER (WHERE state = 'queued') AS oldest_due,
       COUNT(*) FILTER (WHERE finished_at >= :since) AS finished_recently
FROM jobs
GROUP BY queue, tenant, state ORDER BY queue, tenant, state
"""


def job_counts(connection: sqlite3.Connection, now: int, window_ms: int) -> list[JobCount]:
    """How many jobs each queue and tenant has in each state, the oldest due queued
    one, and the finishes since `now - window_ms`: one pass over the jobs."""
    rows = connection.execute(_JOB_COUNTS, {"now": now, "since": now - window_ms})
    return [job_count_from_row(row) for row in rows]


def count_active(connection: sqlite3.Connection, tenant: str) -> int:
    """How many of the tenant's jobs are queued or running."""
    (count,) = connection.execute(
        "SELECT COUNT(*) FROM jobs WHERE state IN ('queued', 'running') AND tenant = ?",
        (tenant,),
    ).fetchone()
    return int(count)


def queued_by_task(connection: sqlite3.Connection, now: int) -> list[TaskBacklog]:
    """Each task with queued jobs: how many, and the age of the oldest due one."""
    rows = connection.execute(
        "SELECT task, COUNT(*) AS queued, "
        "MIN(COALESCE(waiting_since, CASE WHEN run_at <= ? THEN run_at END)) "
        "AS oldest_due FROM jobs WHERE state = 'queued' GROUP BY task ORDER BY task",
        (now,),
    ).fetchall()
    return [task_backlog_from_row(row, now) for row in rows]


_EVERY_QUEUE = """queues (queue) AS (
    SELECT (SELECT queue FROM jobs WHERE state = 'queued' ORDER BY queue LIMIT 1)
    UNION ALL
    SELECT (SELECT queue FROM jobs WHERE state = 'queued' AND queue > queues.queue
            ORDER BY queue LIMIT 1)
    FROM queues WHERE queue IS NOT NULL
)"""
"""Every queue with queued jobs: one seek each in `jobs_wakeup`; its last row is NULL."""

_EVERY_TASK = """pairs (queue, task) AS (
    SELECT queue, (SELECT task FROM jobs WHERE state = 'queued' AND queue = open_queues.queue
                   ORDER BY task LIMIT 1)
    FROM open_queues
    UNION ALL
    SELECT queue, (SELECT task FROM jobs
                   WHERE state = 'queued' AND queue = pairs.queue AND task > pairs.task
                   ORDER BY task LIMIT 1)
    FROM pairs WHERE task IS NOT NULL
)"""
"""Each open queue's tasks with queued jobs: one seek each; a NULL row ends each queue."""

_NEXT_WAKEUP = f"""
WITH RECURSIVE {LANE_USE},
full_lanes (name) AS (
    SELECT name FROM lane_states LEFT JOIN lane_use ON lane_use.lane = name
    WHERE max_concurrency <= COALESCE(in_flight, 0)
),
{{queues}},
open_queues (queue) AS (
    SELECT queue FROM queues AS job WHERE queue IS NOT NULL AND {UNPAUSED_QUEUE}
),
{{pairs}},
lanes (queue, task, lane) AS (
    -- Each (queue, task)'s lanes with queued jobs, one seek each; NULL ends each.
    SELECT queue, task, (SELECT lane FROM jobs
                         WHERE state = 'queued' AND queue = pairs.queue AND task = pairs.task
                           AND lane IS NOT NULL ORDER BY lane LIMIT 1)
    FROM pairs WHERE task IS NOT NULL
    UNION ALL
    SELECT queue, task, (SELECT lane FROM jobs
                         WHERE state = 'queued' AND queue = lanes.queue AND task = lanes.task
                           AND lane > lanes.lane ORDER BY lane LIMIT 1)
    FROM lanes WHERE lane IS NOT NULL
)
SELECT MIN(at) FROM (
    SELECT (SELECT run_at FROM jobs
            WHERE state = 'queued' AND queue = pairs.queue AND task = pairs.task
              AND lane IS NULL ORDER BY run_at LIMIT 1) AS at
    FROM pairs WHERE task IS NOT NULL
    UNION ALL
    SELECT MAX((SELECT run_at FROM jobs
                WHERE state = 'queued' AND queue = job.queue AND task = job.task
                  AND lane = job.lane ORDER BY run_at LIMIT 1),
               COALESCE(lane_state.paused_until, 0))
    FROM lanes AS job LEFT JOIN lane_states AS lane_state ON lane_state.name = job.lane
    WHERE job.lane IS NOT NULL AND {UNPAUSED_LANE}
      AND job.lane NOT IN (SELECT name FROM full_lanes)
    UNION ALL
    SELECT MIN(lease_expires_at) FROM jobs
    WHERE state = 'running'
      AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
      AND (:tasks IS NULL OR task IN (SELECT value FROM json_each(:tasks)))
)
"""
"""`{{queues}}` and `{{pairs}}`: the listed queues and tasks, or every one with queued jobs."""


def next_wakeup(
    connection: sqlite3.Connection, queues: Sequence[str], tasks: Sequence[str] | None = None
) -> int | None:
    """The earliest due time of a queued job or lease expiry of a running one in `queues`,
    of `tasks` (None: any task).

    A job of a lane paused by a 429 is due when both it and the pause are; a job of a
    lane with no free slot, or of a queue or lane a person paused, has no time of its
    own: the call that frees a slot, or resumes, says so (see `Store.on_new_work`), and
    a running job's lease expiry is counted anyway. Queued jobs are read one seek per
    (queue, task, lane) in `jobs_wakeup` (migration 020), never the whole backlog.
    """
    statement = _NEXT_WAKEUP.format(
        queues=(
            "queues (queue) AS (SELECT value FROM json_each(:queues))" if queues else _EVERY_QUEUE
        ),
        pairs=(
            _EVERY_TASK
            if tasks is None
            else "pairs (queue, task) AS (SELECT queue, value FROM open_queues, json_each(:tasks))"
        ),
    )
    parameters = {
        "queues": dump_json(list(queues)) if queues else None,
        "tasks": None if tasks is None else dump_json(list(tasks)),
    }
    (wakeup,) = connection.execute(statement, parameters).fetchone()
    return None if wakeup is None else int(wakeup)


class SqliteEvents(SqlitePart):
    """A job's history: its attempts and its transitions (see `EventStore`)."""

    async def attempts(self, job_id: int) -> list[Attempt]:
        """Every attempt of the job, oldest first."""
        return await self._database.read(lambda connection: _attempts(connection, job_id))

    async def events(self, job_id: int, after: int = 0) -> list[JobEvent]:
        """The job's transitions after the first `after` of them, oldest first."""
        return await self._database.read(lambda connection: _events(connection, job_id, after))
