"""Reads of the queues as a whole on PostgreSQL (`PostgresInsight`): depths, finish
counts per time slot, dead-letter groups."""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core.job import Job, JobState
from backroom.core.usage import AttemptUsage
from backroom.store.insight_protocol import DeadLetterGroup, FinishedCount, QueueDepth
from backroom.store.postgres.part import PostgresPart
from backroom.store.postgres.retention import DELETE_CHOSEN
from backroom.store.rows import job_from_row
from backroom.store.usage_rows import usage_from_row

# Queued jobs from `jobs_depth`, running ones from `jobs_leases` (migration 022): each
# part is the condition of a partial index that covers what it reads.
_DEPTHS = """
SELECT queue, sum(queued)::bigint AS queued, sum(running)::bigint AS running,
       min(oldest_due) AS oldest_due
FROM (
    SELECT queue, count(*) AS queued, 0 AS running,
           min(run_at) FILTER (WHERE run_at <= $1) AS oldest_due
    FROM jobs WHERE state = 'queued' AND ($2::text IS NULL OR tenant = $2) GROUP BY queue
    UNION ALL
    SELECT queue, 0, count(*), NULL
    FROM jobs WHERE state = 'running' AND ($2::text IS NULL OR tenant = $2) GROUP BY queue
) AS part
GROUP BY queue ORDER BY queue COLLATE "C"
"""
"""$1 now, $2 tenant (NULL: every tenant)."""

_FINISHED = """
SELECT queue, (finished_at - $1) / $2 AS slot, state, count(*) AS count
FROM jobs
WHERE finished_at >= $1 AND state IN ('succeeded', 'failed', 'cancelled')
  AND ($3::text IS NULL OR tenant = $3)
GROUP BY queue, slot, state ORDER BY queue COLLATE "C", slot, state COLLATE "C"
"""
"""$1 since, $2 slot length, $3 tenant (NULL: every tenant)."""

_DEAD_LETTERS = """
WITH groups AS (
    SELECT task, error_kind, count(*) AS count, max(id) AS newest_id
    FROM jobs
    WHERE state = 'failed' AND ($1::text IS NULL OR tenant = $1)
    GROUP BY task, error_kind
)
SELECT groups.*, jobs.error_message AS newest_message
FROM groups JOIN jobs ON jobs.id = groups.newest_id
ORDER BY count DESC, groups.task COLLATE "C", groups.error_kind COLLATE "C" NULLS FIRST
"""
"""$1 tenant (NULL: every tenant)."""


# `state = 'running'` is the condition of the partial index `jobs_leases`.
_RUNNING = """
SELECT * FROM jobs WHERE state = 'running' AND ($1::text IS NULL OR tenant = $1)
ORDER BY lease_expires_at, id LIMIT $2
"""
"""$1 tenant (NULL: every tenant), $2 limit."""


class PostgresInsight(PostgresPart):
    """Reads of the queues as a whole (see `InsightStore`)."""

    async def queue_depths(self, now: int, tenant: str | None) -> list[QueueDepth]:
        """Per queue with queued or running jobs, by name."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_DEPTHS, now, tenant)
        return [
            QueueDepth(row["queue"], row["queued"], row["running"], row["oldest_due"])
            for row in rows
        ]

    async def finished_counts(
        self, since: int, slot_ms: int, tenant: str | None
    ) -> list[FinishedCount]:
        """Jobs that ended at or after `since`, per queue, slot and state."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_FINISHED, since, slot_ms, tenant)
        return [
            FinishedCount(
                row["queue"], since + row["slot"] * slot_ms, JobState(row["state"]), row["count"]
            )
            for row in rows
        ]

    async def dead_letter_groups(self, tenant: str | None) -> list[DeadLetterGroup]:
        """Failed jobs grouped by task and error class, largest group first."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_DEAD_LETTERS, tenant)
        return [
            DeadLetterGroup(
                row["task"],
                row["error_kind"],
                row["count"],
                row["newest_id"],
                row["newest_message"],
            )
            for row in rows
        ]

    async def running_jobs(self, tenant: str | None, limit: int) -> list[Job]:
        """Up to `limit` running jobs, the lease that ends first first."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_RUNNING, tenant, limit)
        return [job_from_row(row) for row in rows]

    async def delete_jobs(self, job_ids: Sequence[int], tenant: str | None) -> int:
        """Delete the finished jobs among `job_ids` of `tenant`; how many."""
        async with self._database.connection() as connection:
            deleted: int = await connection.fetchval(DELETE_CHOSEN, list(job_ids), tenant)
        return deleted

    async def attempt_usages(self, job_id: int) -> list[AttemptUsage]:
        """What each LLM call of the job used and cost, oldest claim first."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(
                "SELECT * FROM llm_usage WHERE job_id = $1 ORDER BY lease_token", job_id
            )
        return [usage_from_row(row) for row in rows]
