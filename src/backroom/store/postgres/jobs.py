"""Jobs on PostgreSQL as callers see them: submit, read, count, cancel and redrive.

Submitting is in `postgres.submit`; the read SQL is shared in `postgres.queries`.
"""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core import transitions
from backroom.core.job import Job, NewJob, SubmitResult
from backroom.core.job_batch import SubmittedJobs, has_caps, has_keys
from backroom.store.postgres import queries
from backroom.store.postgres.history import RECORD_TRANSITIONS
from backroom.store.postgres.part import PostgresPart
from backroom.store.postgres.submit import submit_each, submit_jobs
from backroom.store.postgres.wake_hint import WakeHint
from backroom.store.records import JobFilter, RedriveFilter
from backroom.store.rows import error_columns, job_from_row
from backroom.store.submit_group import SubmitGroups

_CANCEL = f"""
WITH target AS (
    SELECT id, state FROM jobs WHERE id = $1 AND ($3::text IS NULL OR tenant = $3) FOR UPDATE
), cancelled AS (
    -- A queued job is cancelled at once; a running one is flagged for its worker.
    UPDATE jobs AS job SET
        state = CASE WHEN target.state = 'queued' THEN $5 ELSE job.state END,
        finished_at = CASE WHEN target.state = 'queued' THEN $6 ELSE job.finished_at END,
        cancel_requested = job.cancel_requested OR target.state = 'running',
        updated_at = $2
    FROM target WHERE job.id = target.id AND target.state IN ('queued', 'running')
    RETURNING job.*
), moves AS (
    SELECT id AS job_id, $2::bigint AS at, 'queued' AS from_state, state AS to_state,
           $4::text AS reason
    FROM cancelled WHERE state = $5
), {RECORD_TRANSITIONS}
SELECT * FROM cancelled
UNION ALL
-- A finished job is left as it is.
SELECT job.* FROM jobs AS job JOIN target USING (id)
WHERE target.state NOT IN ('queued', 'running')
"""
"""$1 job id, $2 now, $3 tenant (NULL: any), then the cancel transition's $4 reason, $5 state
and $6 finished_at: the job afterwards, if it exists."""

_REDRIVE = f"""
WITH picked AS (
    SELECT id FROM jobs
    WHERE state = 'failed'
      AND ($4::text IS NULL OR tenant = $4)
      AND ($5::text IS NULL OR task = $5)
      AND ($6::text IS NULL OR queue = $6)
      AND (cardinality($7::bigint[]) = 0 OR id = ANY($7::bigint[]))
    ORDER BY id
    FOR UPDATE
), redriven AS (
    UPDATE jobs AS job SET
        -- A redrive resets the attempt count and the cancellation flag.
        state = $8, attempt = 0, run_at = $9, finished_at = $10,
        error_kind = $11, error_message = $12, cancel_requested = FALSE, updated_at = $1
    FROM picked WHERE job.id = picked.id
    RETURNING job.*
), moves AS (
    SELECT id AS job_id, $1::bigint AS at, 'failed' AS from_state, state AS to_state,
           $3::text AS reason
    FROM redriven
), {RECORD_TRANSITIONS}, forgotten AS (
    -- A `once` effect begun but never recorded as done is what the person redriving
    -- has checked (OnceUncertain): it runs again.
    DELETE FROM once_records
    WHERE job_id = ANY (ARRAY(SELECT id FROM redriven)) AND NOT done
), wake AS (
    SELECT pg_notify($2, '') WHERE EXISTS (SELECT FROM redriven)
)
SELECT redriven.*, (SELECT count(*) FROM wake) AS woken FROM redriven ORDER BY id
"""
"""$1 now, $2 channel, $3 reason, $4 tenant, $5 task, $6 queue, $7 job ids (empty: any),
then the redrive transition's $8 state, $9 run_at, $10 finished_at and $11, $12 error."""


class PostgresJobs(PostgresPart):
    """Jobs as callers see them (see `JobStore`)."""

    _submit_groups: SubmitGroups
    """Concurrent `submit` calls, stored a group at a time (`PostgresStore` sets it)."""
    _wake_hint: WakeHint
    """Wakes the workers after a group's commit (`PostgresStore` sets it)."""

    async def submit(self, new: NewJob, now: int) -> SubmitResult:
        """Store a queued job, or return the one its idempotency key already names.

        Calls made while others are being stored share one statement and commit with
        them (see `postgres.submit_group`).
        """
        return await self._submit_groups.submit(new, now)

    async def _submit_group(
        self, jobs: Sequence[NewJob], now: int
    ) -> Sequence[SubmitResult | Exception]:
        """A group of `submit` calls: one statement, each answered on its own, unless a
        job has a cap (then one transaction, all or none, for the caps' locks).

        The statement commits without NOTIFY, whose lock serializes the commits of
        concurrent groups; the hints follow the commit (`postgres.wake_hint`).
        """
        if any(new.max_active is not None for new in jobs):
            return await self.submit_many(jobs, now)
        async with self._database.connection() as connection:
            results = await submit_each(connection, jobs, now, self._channel, notify=False)
        created = [
            result.job for result in results if isinstance(result, SubmitResult) and result.created
        ]
        if created:
            self._feed_hint.send()
        if any(job.run_at <= now for job in created):
            self._wake_hint.send()
        return results

    async def _submit_alone(self, new: NewJob, now: int) -> SubmitResult:
        """`submit` for one job, in a statement of its own."""
        if new.max_active is not None:
            (capped,) = await self.submit_many([new], now)
            return capped
        # One statement: it inserts atomically, and a repeated key inserts nothing.
        async with self._database.connection() as connection:
            (result,) = await submit_jobs(connection, [new], now, self._channel)
        return result

    async def submit_many(self, jobs: Sequence[NewJob], now: int) -> SubmittedJobs:
        """`submit` for many jobs in one transaction, in order."""
        if not jobs:
            return SubmittedJobs(jobs, now, [])
        if not has_keys(jobs) and not has_caps(jobs):
            # One statement stores them all or none, and nothing else is read or locked:
            # no transaction around it (two round trips less).
            async with self._database.with_settings() as connection:
                return await submit_jobs(connection, jobs, now, self._channel)
        async with self._database.transaction() as connection:
            return await submit_jobs(connection, jobs, now, self._channel)

    async def get(self, job_id: int, tenant: str | None = None) -> Job | None:
        """The job, or None if it does not exist or belongs to another tenant."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(queries.GET_JOB, job_id, tenant)
        return None if row is None else job_from_row(row)

    async def list_jobs(self, where: JobFilter) -> list[Job]:
        """Jobs matching `where`, newest first, at most `where.limit`."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(
                queries.LIST_JOBS,
                where.before_id,
                where.tenant,
                where.queue,
                where.task,
                list(where.states),
                where.limit,
                where.created_from,
                where.created_until,
                None if where.search is None else where.search.lower(),
            )
        return [job_from_row(row) for row in rows]

    async def count_active(self, tenant: str) -> int:
        """How many of the tenant's jobs are queued or running."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(queries.ACTIVE_BY_TENANT, [tenant])
        active: int = 0 if row is None else row["active"]
        return active

    async def cancel(self, job_id: int, now: int, tenant: str | None = None) -> Job | None:
        """Cancel a queued job now, or ask a running one's worker to stop it."""
        transition = transitions.cancelled(now)
        async with self._database.connection() as connection:
            row = await connection.fetchrow(
                _CANCEL,
                job_id,
                transition.at,
                tenant,
                transition.reason,
                transition.target,
                transition.finished_at,
            )
        return None if row is None else job_from_row(row)

    async def redrive(self, where: RedriveFilter, now: int) -> list[Job]:
        """Send failed jobs back to the queue with a fresh attempt budget."""
        transition = transitions.redriven(now)
        async with self._database.connection() as connection:
            rows = await connection.fetch(
                _REDRIVE,
                transition.at,
                self._channel,
                transition.reason,
                where.tenant,
                where.task,
                where.queue,
                list(where.job_ids),
                transition.target,
                transition.run_at,
                transition.finished_at,
                *error_columns(transition.error),
            )
        return [job_from_row(row) for row in rows]
