"""Reads of the queues as a whole on SQLite (`SqliteInsight`): depths, finish counts
per time slot, dead-letter groups."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from backroom.core.job import Job, JobState
from backroom.core.usage import AttemptUsage
from backroom.store.insight_protocol import DeadLetterGroup, FinishedCount, QueueDepth
from backroom.store.rows import job_from_row
from backroom.store.sqlite.part import SqlitePart
from backroom.store.sqlite.retention import delete_chosen
from backroom.store.usage_rows import usage_from_row

# `state IN ('queued', 'running')` is the condition of the partial index `jobs_active`.
_DEPTHS = """
SELECT queue,
       COUNT(*) FILTER (WHERE state = 'queued') AS queued,
       COUNT(*) FILTER (WHERE state = 'running') AS running,
       MIN(run_at) FILTER (WHERE state = 'queued' AND run_at <= :now) AS oldest_due
FROM jobs
WHERE state IN ('queued', 'running') AND (:tenant IS NULL OR tenant = :tenant)
GROUP BY queue ORDER BY queue
"""

# `jobs_finished_at` covers the query: the window's finishes only, no table reads.
_FINISHED = """
SELECT queue, (finished_at - :since) / :slot AS slot, state, COUNT(*) AS count
FROM jobs INDEXED BY jobs_finished_at
WHERE finished_at >= :since AND state IN ('succeeded', 'failed', 'cancelled')
  AND (:tenant IS NULL OR tenant = :tenant)
GROUP BY queue, slot, state ORDER BY queue, slot, state
"""

_DEAD_LETTERS = """
WITH groups AS (
    SELECT task, error_kind, COUNT(*) AS count, MAX(id) AS newest_id
    FROM jobs
    WHERE state = 'failed' AND (:tenant IS NULL OR tenant = :tenant)
    GROUP BY task, error_kind
)
SELECT groups.*, jobs.error_message AS newest_message
FROM groups JOIN jobs ON jobs.id = groups.newest_id
ORDER BY count DESC, groups.task, groups.error_kind
"""


# `state = 'running'` is the condition of the partial index `jobs_leases`.
_RUNNING = """
SELECT * FROM jobs WHERE state = 'running' AND (:tenant IS NULL OR tenant = :tenant)
ORDER BY lease_expires_at, id LIMIT :limit
"""


def _running(connection: sqlite3.Connection, tenant: str | None, limit: int) -> list[Job]:
    rows = connection.execute(_RUNNING, {"tenant": tenant, "limit": limit})
    return [job_from_row(row) for row in rows]


def _depths(connection: sqlite3.Connection, now: int, tenant: str | None) -> list[QueueDepth]:
    rows = connection.execute(_DEPTHS, {"now": now, "tenant": tenant})
    return [
        QueueDepth(row["queue"], row["queued"], row["running"], row["oldest_due"]) for row in rows
    ]


def _finished(
    connection: sqlite3.Connection, since: int, slot_ms: int, tenant: str | None
) -> list[FinishedCount]:
    rows = connection.execute(_FINISHED, {"since": since, "slot": slot_ms, "tenant": tenant})
    return [
        FinishedCount(
            row["queue"], since + row["slot"] * slot_ms, JobState(row["state"]), row["count"]
        )
        for row in rows
    ]


def _dead_letters(connection: sqlite3.Connection, tenant: str | None) -> list[DeadLetterGroup]:
    rows = connection.execute(_DEAD_LETTERS, {"tenant": tenant})
    return [
        DeadLetterGroup(
            row["task"], row["error_kind"], row["count"], row["newest_id"], row["newest_message"]
        )
        for row in rows
    ]


class SqliteInsight(SqlitePart):
    """Reads of the queues as a whole (see `InsightStore`)."""

    async def queue_depths(self, now: int, tenant: str | None) -> list[QueueDepth]:
        """Per queue with queued or running jobs, by name."""
        return await self._database.read(lambda connection: _depths(connection, now, tenant))

    async def finished_counts(
        self, since: int, slot_ms: int, tenant: str | None
    ) -> list[FinishedCount]:
        """Jobs that ended at or after `since`, per queue, slot and state."""
        return await self._database.read(
            lambda connection: _finished(connection, since, slot_ms, tenant)
        )

    async def dead_letter_groups(self, tenant: str | None) -> list[DeadLetterGroup]:
        """Failed jobs grouped by task and error class, largest group first."""
        return await self._database.read(lambda connection: _dead_letters(connection, tenant))

    async def running_jobs(self, tenant: str | None, limit: int) -> list[Job]:
        """Up to `limit` running jobs, the lease that ends first first."""
        return await self._database.read(lambda connection: _running(connection, tenant, limit))

    async def delete_jobs(self, job_ids: Sequence[int], tenant: str | None) -> int:
        """Delete the finished jobs among `job_ids` of `tenant`; how many."""
        return await self._database.write(
            lambda connection: delete_chosen(connection, job_ids, tenant)
        )

    async def attempt_usages(self, job_id: int) -> list[AttemptUsage]:
        """What each LLM call of the job used and cost, oldest claim first."""
        rows = await self._database.read(
            lambda connection: connection.execute(
                "SELECT * FROM llm_usage WHERE job_id = ? ORDER BY lease_token", (job_id,)
            ).fetchall()
        )
        return [usage_from_row(row) for row in rows]
