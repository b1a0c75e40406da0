"""Retention on PostgreSQL: delete finished jobs older than a cutoff, with their history.

One call is one statement deleting one bounded batch: the jobs, and every row that
names them (attempts, transition events, `ctx.once` records, LLM call records,
webhook deliveries), in one short transaction. The batch is taken with `FOR UPDATE
SKIP LOCKED`, so workers sweeping at the same moment delete disjoint batches instead
of waiting for each other, and an operator action on one of the jobs (a redrive) is
never overwritten by a delete.
"""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core.job import TERMINAL_STATES, JobState
from backroom.store.postgres.database import PooledConnection

# Keep a job whose events a durable feed reader (webhook dispatch) has not read.
_READ_BY_EVERY_READER = """NOT EXISTS (
          SELECT FROM job_events AS e
          WHERE e.job_id = jobs.id
            AND (e.xid, e.id) > (SELECT c.commit_id::text::xid8, c.event_id
                                 FROM feed_cursors AS c
                                 ORDER BY c.commit_id, c.event_id LIMIT 1))"""

_GONE = """attempts_gone AS (
    DELETE FROM attempts WHERE job_id = ANY (ARRAY(SELECT id FROM doomed))
), events_gone AS (
    DELETE FROM job_events WHERE job_id = ANY (ARRAY(SELECT id FROM doomed))
), once_gone AS (
    DELETE FROM once_records WHERE job_id = ANY (ARRAY(SELECT id FROM doomed))
), calls_gone AS (
    DELETE FROM llm_calls WHERE job_id = ANY (ARRAY(SELECT id FROM doomed))
), delivery_attempts_gone AS (
    DELETE FROM webhook_delivery_attempts WHERE delivery_id = ANY (ARRAY(
        SELECT id FROM webhook_deliveries WHERE job_id = ANY (ARRAY(SELECT id FROM doomed))))
), deliveries_gone AS (
    DELETE FROM webhook_deliveries WHERE job_id = ANY (ARRAY(SELECT id FROM doomed))
), jobs_gone AS (
    DELETE FROM jobs WHERE id = ANY (ARRAY(SELECT id FROM doomed)) RETURNING id
)
SELECT count(*) FROM jobs_gone
"""
"""The deletions of the jobs a `doomed` CTE names, with every row that names them."""

PRUNE = f"""
WITH doomed AS (
    -- `finished_at < $1` admits the partial index `jobs_finished_at` (finished jobs only).
    SELECT id FROM jobs
    WHERE state = ANY ($2::text[]) AND finished_at < $1 AND {_READ_BY_EVERY_READER}
    LIMIT $3
    FOR UPDATE SKIP LOCKED
), {_GONE}"""
"""$1 finished before, $2 states, $3 limit: how many jobs were deleted."""


async def prune(
    connection: PooledConnection, older_than: int, states: Sequence[JobState], limit: int
) -> int:
    """Delete up to `limit` jobs in `states` that finished before `older_than`.

    Returns how many jobs were deleted. Raises `ValueError` for a state that is not
    final: only finished jobs may be pruned.
    """
    unfinished = set(states) - TERMINAL_STATES
    if unfinished:
        raise ValueError(f"only finished jobs can be pruned, not {sorted(unfinished)}")
    deleted: int = await connection.fetchval(
        PRUNE, older_than, [str(state) for state in states], limit
    )
    return deleted


DELETE_CHOSEN = f"""
WITH doomed AS (
    SELECT id FROM jobs
    WHERE id = ANY ($1::bigint[]) AND state IN ('succeeded', 'failed', 'cancelled')
      AND ($2::text IS NULL OR tenant = $2) AND {_READ_BY_EVERY_READER}
    FOR UPDATE SKIP LOCKED
), {_GONE}"""
"""$1 job ids, $2 tenant (NULL: any): how many of those finished jobs were deleted."""
