"""The read-only SQL of the PostgreSQL store (jobs, their history, queue health), and
the part that reads a job's history."""

from __future__ import annotations

from backroom.core.job import Attempt, JobEvent
from backroom.store.postgres.lanes import LANE_USE
from backroom.store.postgres.part import PostgresPart
from backroom.store.postgres.pauses import PAUSED_LANES, PAUSED_QUEUES
from backroom.store.rows import attempt_from_row, event_from_row

GET_JOB = "SELECT * FROM jobs WHERE id = $1 AND ($2::text IS NULL OR tenant = $2)"
"""$1 job id, $2 tenant (NULL: any)."""

LIST_JOBS = """
SELECT * FROM jobs
WHERE ($1::bigint IS NULL OR id < $1)
  AND ($2::text IS NULL OR tenant = $2)
  AND ($3::text IS NULL OR queue = $3)
  AND ($4::text IS NULL OR task = $4)
  AND (cardinality($5::text[]) = 0 OR state = ANY($5::text[]))
  AND ($7::bigint IS NULL OR created_at >= $7)
  AND ($8::bigint IS NULL OR created_at < $8)
  AND ($9::text IS NULL OR strpos(lower(input::text), $9) > 0
       OR strpos(lower(metadata::text), $9) > 0
       OR strpos(lower(COALESCE(error_kind, '') || ' ' || COALESCE(error_message, '')), $9) > 0)
ORDER BY id DESC
LIMIT $6
"""
"""$1 cursor (only smaller ids), $2 tenant, $3 queue, $4 task (NULL: any), $5 states
(empty: any), $6 limit, $7 and $8 creation time from and until, $9 lower-case text
searched in input, metadata and error."""

JOBS_BY_KEY = """
SELECT jobs.* FROM jobs
JOIN unnest($1::text[], $2::text[]) AS wanted (tenant, idempotency_key)
  USING (tenant, idempotency_key)
"""
"""The jobs named by (tenant, idempotency key) pairs."""

_ATTEMPTS = """
SELECT job_id, number, lease_token, worker_id, started_at, finished_at, outcome,
       error_kind, error_message, next_attempt_at, lane
FROM attempts WHERE job_id = $1
UNION ALL
SELECT id, attempt, lease_token, worker_id, started_at, NULL, NULL, NULL, NULL, NULL, lane
FROM jobs
WHERE id = $1 AND state = 'running'
  AND NOT EXISTS (SELECT FROM attempts WHERE job_id = $1 AND lease_token = jobs.lease_token)
ORDER BY lease_token
"""
"""$1 job id: the stored attempts, and the running one from the job's row unless it was
stored before its end (see `postgres.finish`), in claim order, one snapshot."""

# Progress events (running to running) are for the feed, not the job's transitions.
_EVENTS = (
    "SELECT * FROM job_events WHERE job_id = $1 "
    "AND NOT (from_state = 'running' AND to_state = 'running') ORDER BY id OFFSET $2"
)
"""$1 job id, $2 how many of the first events to skip."""

JOB_COUNTS = """
SELECT queue, tenant, state, count(*) AS jobs,
       min(COALESCE(waiting_since, CASE WHEN run_at <= $1 THEN run_at END))
           FILTER (WHERE state = 'queued') AS oldest_due,
       count(*) FILTER (WHERE finished_at >= $2) AS finished_recently
FROM jobs
GROUP BY queue, tenant, state
ORDER BY queue COLLATE "C", tenant COLLATE "C", state COLLATE "C"
"""
"""$1 now, $2 start of the recent window: how many jobs each queue and tenant has in
each state, the oldest due queued one, and the recent finishes, in one pass."""

STATS = """
SELECT queue,
       count(*) FILTER (WHERE state = 'queued') AS queued,
       count(*) FILTER (WHERE state = 'running') AS running,
       count(*) FILTER (WHERE state = 'succeeded') AS succeeded,
       count(*) FILTER (WHERE state = 'failed') AS failed,
       count(*) FILTER (WHERE state = 'cancelled') AS cancelled,
       -- A job that could not start (its lane, its budget) waits since it was first due.
       min(COALESCE(waiting_since, CASE WHEN run_at <= $1 THEN run_at END))
           FILTER (WHERE state = 'queued') AS oldest_due,
       count(*) FILTER (WHERE finished_at >= $2) AS finished_recently,
       count(*) FILTER (WHERE state = 'failed' AND finished_at >= $2) AS failed_recently
FROM jobs
GROUP BY queue
-- Byte order, as SQLite sorts.
ORDER BY queue COLLATE "C"
"""
"""$1 now, $2 start of the recent window."""

QUEUES_WITH_WORK = """queues (queue) AS (
    -- Every queue with queued jobs: one seek in `jobs_claim` per queue.
    SELECT min(queue) FROM jobs WHERE state = 'queued'
    UNION ALL
    SELECT (SELECT min(queue) FROM jobs WHERE state = 'queued' AND queue > queues.queue)
    FROM queues WHERE queue IS NOT NULL
)"""
"""A recursive CTE for `WITH RECURSIVE`; its last row is NULL."""

ACTIVE_BY_TENANT = f"""
WITH RECURSIVE {QUEUES_WITH_WORK}
SELECT wanted.tenant,
       (SELECT count(*) FROM jobs
        WHERE state = 'running' AND (jobs.tenant = wanted.tenant) IS TRUE)
       + (SELECT COALESCE(sum(queued.jobs), 0)::bigint
          FROM queues
          CROSS JOIN LATERAL (
              SELECT count(*) AS jobs FROM jobs
              WHERE state = 'queued' AND jobs.queue = queues.queue
                AND jobs.tenant = wanted.tenant
          ) AS queued
          WHERE queues.queue IS NOT NULL) AS active
FROM unnest($1::text[]) AS wanted (tenant)
"""
"""$1 tenants: how many jobs each has queued or running.

Queued jobs are counted queue by queue in `jobs_claim`, running ones among the few in
`jobs_leases` (not through `jobs_tenant`, which holds the tenant's whole history): no
index just for this count, so none competes with the claim's.
"""

QUEUED_BY_TASK = """
SELECT task, count(*) AS queued,
       min(COALESCE(waiting_since, CASE WHEN run_at <= $1 THEN run_at END)) AS oldest_due
FROM jobs WHERE state = 'queued' GROUP BY task ORDER BY task
"""
"""$1 now: each task's queued jobs, and the due time of its oldest due one (or the
first due time of one waiting for its lane or budget)."""

NEXT_WAKEUP = f"""
WITH RECURSIVE {QUEUES_WITH_WORK},
{LANE_USE},
full_lanes (name) AS (
    SELECT name FROM lane_states LEFT JOIN lane_use ON lane_use.lane = name
    WHERE max_concurrency <= COALESCE(in_flight, 0)
),
open_queues (queue) AS (
    SELECT queue FROM unnest($1::text[]) AS listed (queue)
    WHERE queue <> ALL (ARRAY({PAUSED_QUEUES}))
    UNION ALL
    SELECT queue FROM queues
    WHERE $1::text[] IS NULL AND queue IS NOT NULL AND queue <> ALL (ARRAY({PAUSED_QUEUES}))
),
tasks (queue, task) AS (
    -- Any task: each queue's tasks with queued jobs, one seek each in `jobs_wakeup`.
    SELECT queue, (SELECT task FROM jobs WHERE state = 'queued' AND queue = open_queues.queue
                   ORDER BY task LIMIT 1)
    FROM open_queues WHERE $2::text[] IS NULL
    UNION ALL
    SELECT queue, (SELECT task FROM jobs
                   WHERE state = 'queued' AND queue = tasks.queue AND task > tasks.task
                   ORDER BY task LIMIT 1)
    FROM tasks WHERE task IS NOT NULL
),
pairs (queue, task) AS (
    SELECT queue, task FROM tasks WHERE task IS NOT NULL
    UNION ALL
    SELECT queue, task FROM open_queues CROSS JOIN unnest($2::text[]) AS wanted (task)
),
lanes (queue, task, lane) AS (
    -- Each (queue, task)'s lanes with queued jobs, one seek each.
    SELECT queue, task, (SELECT lane FROM jobs
                         WHERE state = 'queued' AND queue = pairs.queue AND task = pairs.task
                           AND lane IS NOT NULL
                         ORDER BY lane LIMIT 1)
    FROM pairs
    UNION ALL
    SELECT queue, task, (SELECT lane FROM jobs
                         WHERE state = 'queued' AND queue = lanes.queue AND task = lanes.task
                           AND lane > lanes.lane
                         ORDER BY lane LIMIT 1)
    FROM lanes WHERE lane IS NOT NULL
)
SELECT LEAST(
    (SELECT min((SELECT run_at FROM jobs
                 WHERE state = 'queued' AND queue = pairs.queue AND task = pairs.task
                   AND lane IS NULL
                 ORDER BY lane, run_at LIMIT 1))
     FROM pairs),
    (SELECT min(GREATEST((SELECT run_at FROM jobs
                          WHERE state = 'queued' AND queue = lanes.queue
                            AND task = lanes.task AND lane = lanes.lane
                          ORDER BY run_at LIMIT 1),
                         lane_state.paused_until))
     FROM lanes LEFT JOIN lane_states AS lane_state ON lane_state.name = lanes.lane
     WHERE lanes.lane <> ALL (ARRAY({PAUSED_LANES}))
       AND lanes.lane <> ALL (ARRAY(SELECT name FROM full_lanes))),
    (SELECT min(lease_expires_at) FROM jobs
     WHERE state = 'running' AND ($1::text[] IS NULL OR queue = ANY ($1::text[]))
       AND ($2::text[] IS NULL OR task = ANY ($2::text[])))
)
"""
"""$1 queues (NULL: every queue), $2 tasks (NULL: any task): the earliest queued due
time or running lease expiry.

A job of a lane paused by a 429 is due when both it and the pause are; a job of a lane
with no free slot, or of a queue or lane a person paused, has no time of its own: the
settle that frees a slot, or the resume, notifies. Queued jobs are read one seek per
(queue, task, lane) in `jobs_wakeup` (migration 020): the earliest of each, never the
whole backlog, however many jobs of other tasks or of closed lanes it holds.
"""


class PostgresEvents(PostgresPart):
    """A job's history: its attempts and its transitions (see `EventStore`)."""

    async def attempts(self, job_id: int) -> list[Attempt]:
        """Every attempt of the job, oldest first."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_ATTEMPTS, job_id)
        return [attempt_from_row(row) for row in rows]

    async def events(self, job_id: int, after: int = 0) -> list[JobEvent]:
        """The job's transitions after the first `after` of them, oldest first."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_EVENTS, job_id, after)
        return [event_from_row(row) for row in rows]
