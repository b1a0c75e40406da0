"""Jobs as callers see them on SQLite: submit, read, count, cancel and redrive (`SqliteJobs`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from backroom.core import transitions
from backroom.core.job import Job, JobState, NewJob, SubmitResult
from backroom.core.job_batch import NewJobs, SubmittedJobs, has_caps, has_keys, keys_of
from backroom.store.records import JobFilter, RedriveFilter
from backroom.store.rows import (
    NEW_JOB_COLUMNS,
    dump_json,
    error_columns,
    job_from_row,
    new_job_rows,
)
from backroom.store.sqlite import queries
from backroom.store.sqlite.history import record_transitions
from backroom.store.sqlite.id_floors import largest_id as largest_id_of
from backroom.store.sqlite.part import SqlitePart
from backroom.store.submission import plan_submissions
from backroom.store.submit_group import SubmitGroups

Key = tuple[str, str]
"""A tenant and an idempotency key."""

_INSERT_JOB = f"""
INSERT INTO jobs (id, state, {NEW_JOB_COLUMNS})
VALUES (?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

_FIND_BY_KEY = "SELECT * FROM jobs WHERE tenant = ? AND idempotency_key = ?"

# A redrive resets the attempt count and the cancellation flag, and sets the error.
_REDRIVE = """
UPDATE jobs
SET state = :target, attempt = 0, run_at = :run_at, finished_at = :finished_at,
    error_kind = :error_kind, error_message = :error_message, cancel_requested = 0,
    updated_at = :at
WHERE state = :source
  AND (:tenant IS NULL OR tenant = :tenant)
  AND (:task IS NULL OR task = :task)
  AND (:queue IS NULL OR queue = :queue)
  AND (:any_id OR id IN (SELECT value FROM json_each(:job_ids)))
RETURNING *
"""


_FIND_BY_KEYS = """
SELECT jobs.* FROM json_each(?) AS wanted
JOIN jobs ON jobs.tenant = json_extract(wanted.value, '$[0]')
         AND jobs.idempotency_key = json_extract(wanted.value, '$[1]')
"""
"""The jobs stored under any of the (tenant, key) pairs of a JSON array."""


def _stored(connection: sqlite3.Connection, jobs: Sequence[NewJob]) -> dict[Key, Job]:
    """The stored jobs the submissions' keys name, by (tenant, key): one statement."""
    keys = sorted({(tenant, key) for tenant, key in keys_of(jobs) if key is not None})
    if len(keys) == 1:
        rows = connection.execute(_FIND_BY_KEY, keys[0]).fetchall()
    else:
        rows = connection.execute(_FIND_BY_KEYS, (dump_json(keys),)).fetchall()
    return {(row["tenant"], row["idempotency_key"]): job_from_row(row) for row in rows}


def store_submissions(
    connection: sqlite3.Connection, jobs: Sequence[NewJob], now: int
) -> SubmittedJobs:
    """Store the new jobs and return each submission's job, created or found by its key."""
    transition = transitions.submitted(now)
    if not has_keys(jobs) and not has_caps(jobs):
        # Nothing to look up or count (most bulk submissions): every job is inserted.
        ids = _insert_jobs(connection, jobs, now)
        record_transitions(connection, ((job_id, transition) for job_id in ids))
        return SubmittedJobs(jobs, now, ids)
    stored = _stored(connection, jobs)
    plan = plan_submissions(
        jobs,
        lambda tenant, key: stored.get((tenant, key)),
        lambda tenant: queries.count_active(connection, tenant),
    )
    ids = _insert_jobs(connection, plan.inserts, now)
    record_transitions(connection, ((job_id, transition) for job_id in ids))
    return plan.submitted(ids, now)


def _insert_jobs(connection: sqlite3.Connection, jobs: Sequence[NewJob], now: int) -> range:
    """Insert the jobs; their ids, in order."""
    if not jobs:
        return range(0)
    # Ids given here (the write lock is held) rather than by SQLite, which could hand
    # out a pruned job's id again.
    first = largest_id_of(connection, "jobs") + 1
    rows = new_job_rows(jobs, now)
    connection.executemany(_INSERT_JOB, [(job_id, *row) for job_id, row in enumerate(rows, first)])
    # The rows hold exactly what `new_job` builds: no need to read them back.
    return range(first, first + len(rows))


def _cancel(
    connection: sqlite3.Connection, job_id: int, now: int, tenant: str | None
) -> Job | None:
    """Cancel a queued job, flag a running one for its worker; leave finished ones be."""
    job = queries.get_job(connection, job_id, tenant)
    if job is None or job.state.terminal:
        return job
    if job.state is JobState.RUNNING:
        row = connection.execute(
            "UPDATE jobs SET cancel_requested = 1, updated_at = ? WHERE id = ? RETURNING *",
            (now, job_id),
        ).fetchone()
        return job_from_row(row)
    transition = transitions.cancelled(now)
    row = connection.execute(
        "UPDATE jobs SET state = ?, finished_at = ?, updated_at = ? WHERE id = ? RETURNING *",
        (transition.target, transition.finished_at, transition.at, job_id),
    ).fetchone()
    record_transitions(connection, [(job_id, transition)])
    return job_from_row(row)


def _redrive(connection: sqlite3.Connection, where: RedriveFilter, now: int) -> list[Job]:
    """Send the failed jobs `where` names back to the queue with a fresh attempt budget."""
    transition = transitions.redriven(now)
    error_kind, error_message = error_columns(transition.error)
    rows = connection.execute(
        _REDRIVE,
        {
            "target": transition.target,
            "source": transition.source,
            "run_at": transition.run_at,
            "finished_at": transition.finished_at,
            "error_kind": error_kind,
            "error_message": error_message,
            "at": transition.at,
            "tenant": where.tenant,
            "task": where.task,
            "queue": where.queue,
            "any_id": not where.job_ids,
            "job_ids": dump_json(list(where.job_ids)),
        },
    ).fetchall()
    jobs = sorted((job_from_row(row) for row in rows), key=lambda job: job.id)
    # An unfinished `once` effect is what the person redriving has checked
    # (OnceUncertain): it runs again.
    connection.executemany(
        "DELETE FROM once_records WHERE job_id = ? AND done = 0", ((job.id,) for job in jobs)
    )
    record_transitions(connection, ((job.id, transition) for job in jobs))
    return jobs


class SqliteJobs(SqlitePart):
    """Jobs as callers see them (see `JobStore`)."""

    _submit_groups: SubmitGroups
    """Concurrent `submit` calls, stored a group at a time (`SqliteStore` sets it)."""

    async def submit(self, new: NewJob, now: int) -> SubmitResult:
        """Store a queued job, or return the one its idempotency key already names.

        Calls made while others are being stored are stored together, in one call of
        `submit_many` (see `store.submit_group`).
        """
        return await self._submit_groups.submit(new, now)

    async def _submit_alone(self, new: NewJob, now: int) -> SubmitResult:
        (result,) = await self.submit_many([new], now)
        return result

    async def submit_many(self, jobs: Sequence[NewJob], now: int) -> SubmittedJobs:
        """`submit` for many jobs in one transaction, in order."""
        if not jobs:
            return SubmittedJobs(jobs, now, [])
        batch = jobs if isinstance(jobs, NewJobs) else tuple(jobs)
        results = await self._database.write(
            lambda connection: store_submissions(connection, batch, now)
        )
        if any(results.created):
            self._new_work.announce()
        return results

    async def get(self, job_id: int, tenant: str | None = None) -> Job | None:
        """The job, or None if it does not exist or belongs to another tenant."""
        return await self._database.read(
            lambda connection: queries.get_job(connection, job_id, tenant)
        )

    async def list_jobs(self, where: JobFilter) -> list[Job]:
        """Jobs matching `where`, newest first, at most `where.limit`."""
        return await self._database.read(lambda connection: queries.list_jobs(connection, where))

    async def count_active(self, tenant: str) -> int:
        """How many of the tenant's jobs are queued or running."""
        return await self._database.read(
            lambda connection: queries.count_active(connection, tenant)
        )

    async def cancel(self, job_id: int, now: int, tenant: str | None = None) -> Job | None:
        """Cancel a queued job now, or ask a running one's worker to stop it."""
        return await self._database.write(
            lambda connection: _cancel(connection, job_id, now, tenant)
        )

    async def redrive(self, where: RedriveFilter, now: int) -> list[Job]:
        """Send failed jobs back to the queue with a fresh attempt budget."""
        redriven = await self._database.write(lambda connection: _redrive(connection, where, now))
        if redriven:
            self._new_work.announce()
        return redriven
