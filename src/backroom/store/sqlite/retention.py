"""Retention on SQLite: delete finished jobs older than a cutoff, with their history.

One call deletes one bounded batch inside the caller's write transaction, so a large
backlog is pruned in many short transactions rather than one that holds the write
lock for long. The jobs go together with every row that names them: attempts,
transition events and `ctx.once` records.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from backroom.core.job import TERMINAL_STATES, JobState
from backroom.store.rows import dump_json
from backroom.store.sqlite.id_floors import raise_floors

# Keep a job whose events a durable feed reader (webhook dispatch) has not read.
_READ_BY_EVERY_READER = """NOT EXISTS (
      SELECT 1 FROM job_events AS e
      WHERE e.job_id = jobs.id AND e.id > (SELECT min(event_id) FROM feed_cursors))"""

# `finished_at < ?` lets SQLite read the partial index `jobs_finished_at` from its
# start, whose rows are the finished jobs only.
_DOOMED = f"""
SELECT id FROM jobs
WHERE state IN (SELECT value FROM json_each(?)) AND finished_at < ?
  AND {_READ_BY_EVERY_READER}
LIMIT ?
"""

_CHOSEN = f"""
SELECT id FROM jobs
WHERE id IN (SELECT value FROM json_each(?)) AND state IN ('succeeded', 'failed', 'cancelled')
  AND (? IS NULL OR tenant = ?) AND {_READ_BY_EVERY_READER}
"""

_DELETES = (
    "DELETE FROM attempts WHERE job_id IN (SELECT value FROM json_each(?))",
    "DELETE FROM job_events WHERE job_id IN (SELECT value FROM json_each(?))",
    "DELETE FROM once_records WHERE job_id IN (SELECT value FROM json_each(?))",
    "DELETE FROM llm_calls WHERE job_id IN (SELECT value FROM json_each(?))",
    "DELETE FROM webhook_delivery_attempts WHERE delivery_id IN "
    "(SELECT id FROM webhook_deliveries WHERE job_id IN (SELECT value FROM json_each(?)))",
    "DELETE FROM webhook_deliveries WHERE job_id IN (SELECT value FROM json_each(?))",
    "DELETE FROM jobs WHERE id IN (SELECT value FROM json_each(?))",
)


def prune(
    connection: sqlite3.Connection, older_than: int, states: Sequence[JobState], limit: int
) -> int:
    """Delete up to `limit` jobs in `states` that finished before `older_than`.

    Call inside a write transaction; returns how many jobs were deleted. Raises
    `ValueError` for a state that is not final: only finished jobs may be pruned.
    """
    unfinished = set(states) - TERMINAL_STATES
    if unfinished:
        raise ValueError(f"only finished jobs can be pruned, not {sorted(unfinished)}")
    doomed = [
        job_id
        for (job_id,) in connection.execute(
            _DOOMED, (dump_json([str(state) for state in states]), older_than, limit)
        )
    ]
    return _delete(connection, doomed)


def _delete(connection: sqlite3.Connection, doomed: list[int]) -> int:
    if doomed:
        raise_floors(connection)
        ids = dump_json(doomed)
        for statement in _DELETES:
            connection.execute(statement, (ids,))
    return len(doomed)


def delete_chosen(
    connection: sqlite3.Connection, job_ids: Sequence[int], tenant: str | None
) -> int:
    """Delete the finished jobs among `job_ids` of `tenant` (see `InsightStore.delete_jobs`)."""
    chosen = connection.execute(_CHOSEN, (dump_json(list(job_ids)), tenant, tenant))
    return _delete(connection, [job_id for (job_id,) in chosen])
