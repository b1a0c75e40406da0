"""Retention in memory: delete finished jobs older than a cutoff, with their history."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from backroom.core.job import TERMINAL_STATES, JobState
from backroom.store.memory.feed import forget_jobs
from backroom.store.memory.tables import MemoryTables


def prune(tables: MemoryTables, older_than: int, states: Sequence[JobState], limit: int) -> int:
    """Delete up to `limit` jobs in `states` that finished before `older_than`.

    Their attempts, events, `once` records and LLM call records go with them; their
    usage stays (it is the spend record). Raises `ValueError` for a state that is not final.
    """
    unfinished = set(states) - TERMINAL_STATES
    if unfinished:
        raise ValueError(f"only finished jobs can be pruned, not {sorted(unfinished)}")
    chosen = frozenset(states)
    unread = unread_jobs(tables)
    old = (
        row.id
        for row in tables.jobs.values()
        if row.state in chosen
        and row.finished_at is not None
        and row.finished_at < older_than
        and row.id not in unread
    )
    # A negative limit, as in SQL, means no limit.
    doomed = list(itertools.islice(old, limit if limit >= 0 else None))
    for job_id in doomed:
        tables.delete_job(job_id)
    if doomed:
        forget_jobs(tables)
    return len(doomed)


def unread_jobs(tables: MemoryTables) -> set[int]:
    """Jobs with events that a durable feed reader (webhook dispatch) has not read."""
    if not tables.feed_cursors:
        return set()
    floor = min(tables.feed_cursors.values())
    return {job_id for event_id, job_id, _ in tables.feed if event_id > floor}
