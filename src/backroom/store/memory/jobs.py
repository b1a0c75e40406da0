"""Changes callers make to jobs in memory: submit, cancel and redrive."""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core import transitions
from backroom.core.job import Job, JobState, NewJob, SubmitResult
from backroom.core.job_batch import SubmittedJobs
from backroom.core.transitions import new_job
from backroom.store.memory import queries
from backroom.store.memory.history import record_transition, write_transition
from backroom.store.memory.part import MemoryPart
from backroom.store.memory.queries import visible_row
from backroom.store.memory.tables import JobRow, MemoryTables
from backroom.store.records import JobFilter, RedriveFilter
from backroom.store.rows import dump_json, job_from_row
from backroom.store.submission import plan_submissions


def _stored(tables: MemoryTables, tenant: str, key: str) -> Job | None:
    job_id = tables.by_key.get((tenant, key))
    return None if job_id is None else job_from_row(tables.jobs[job_id])


def _row(job_id: int, new: NewJob, now: int) -> JobRow:
    return JobRow(
        id=job_id,
        tenant=new.tenant,
        task=new.task,
        queue=new.queue,
        priority=new.priority,
        state=JobState.QUEUED,
        input=dump_json(new.input),
        max_attempts=new.max_attempts,
        timeout_ms=new.timeout_ms,
        run_at=new.run_at,
        created_at=now,
        updated_at=now,
        idempotency_key=new.idempotency_key,
        fingerprint=new.fingerprint,
        metadata=dump_json(new.metadata),
        lane=new.lane,
        webhook_url=new.webhook_url,
        traceparent=new.traceparent,
    )


def store_submissions(tables: MemoryTables, jobs: Sequence[NewJob], now: int) -> list[SubmitResult]:
    """Store the new jobs and return each submission's job, created or found by its key."""
    plan = plan_submissions(
        jobs, lambda tenant, key: _stored(tables, tenant, key), lambda tenant: tables.active[tenant]
    )
    # Every row is built (its JSON encoded) before any is stored: all or nothing.
    first_id = tables.last_job_id + 1
    rows = [_row(job_id, new, now) for job_id, new in enumerate(plan.inserts, first_id)]
    transition = transitions.submitted(now)
    for row in rows:
        tables.insert_job(row)
        record_transition(tables, row.id, transition)
    # The rows hold exactly what `new_job` builds, as the SQL stores return it.
    inserted = [new_job(row.id, new, now) for row, new in zip(rows, plan.inserts, strict=True)]
    return plan.results(inserted)


def _cancel(tables: MemoryTables, job_id: int, now: int, tenant: str | None) -> Job | None:
    """Cancel a queued job, flag a running one for its worker; leave finished ones be."""
    row = visible_row(tables, job_id, tenant)
    if row is None or row.state.terminal:
        return None if row is None else job_from_row(row)
    if row.state is JobState.RUNNING:
        row.cancel_requested = True
        row.updated_at = now
        return job_from_row(row)
    write_transition(tables, row, transitions.cancelled(now))
    return job_from_row(row)


def _redrivable(row: JobRow, where: RedriveFilter, job_ids: frozenset[int]) -> bool:
    return (
        row.state is JobState.FAILED
        and where.tenant in (None, row.tenant)
        and where.task in (None, row.task)
        and where.queue in (None, row.queue)
        and (not job_ids or row.id in job_ids)
    )


def _redrive(tables: MemoryTables, where: RedriveFilter, now: int) -> list[Job]:
    """Send the failed jobs `where` names back to the queue with a fresh attempt budget."""
    job_ids = frozenset(where.job_ids)
    named = (tables.jobs.get(job_id) for job_id in sorted(job_ids)) if job_ids else None
    candidates = tables.jobs.values() if named is None else (row for row in named if row)
    chosen = [row for row in candidates if _redrivable(row, where, job_ids)]
    transition = transitions.redriven(now)
    for row in chosen:
        # An unfinished `once` effect is what the person redriving has checked
        # (OnceUncertain): it runs again.
        records = tables.once.get(row.id, {})
        for name in [name for name, record in records.items() if not record.done]:
            del records[name]
        write_transition(tables, row, transition)
    return [job_from_row(row) for row in chosen]


class MemoryJobs(MemoryPart):
    """Jobs as callers see them (see `JobStore`)."""

    async def submit(self, new: NewJob, now: int) -> SubmitResult:
        """Store a queued job, or return the one its idempotency key already names."""
        (result,) = await self.submit_many([new], now)
        return result

    async def submit_many(self, jobs: Sequence[NewJob], now: int) -> SubmittedJobs:
        """`submit` for many jobs at once, in order; a refusal stores none of them."""
        results = SubmittedJobs.of(store_submissions(self._tables, jobs, now))
        if any(result.created for result in results):
            self._new_work.announce()
        return results

    async def get(self, job_id: int, tenant: str | None = None) -> Job | None:
        """The job, or None if it does not exist or belongs to another tenant."""
        return queries.get_job(self._tables, job_id, tenant)

    async def list_jobs(self, where: JobFilter) -> list[Job]:
        """Jobs matching `where`, newest first, at most `where.limit`."""
        return queries.list_jobs(self._tables, where)

    async def count_active(self, tenant: str) -> int:
        """How many of the tenant's jobs are queued or running."""
        return queries.count_active(self._tables, tenant)

    async def cancel(self, job_id: int, now: int, tenant: str | None = None) -> Job | None:
        """Cancel a queued job now, or ask a running one's worker to stop it."""
        return _cancel(self._tables, job_id, now, tenant)

    async def redrive(self, where: RedriveFilter, now: int) -> list[Job]:
        """Send failed jobs back to the queue with a fresh attempt budget."""
        redriven = _redrive(self._tables, where, now)
        if redriven:
            self._new_work.announce()
        return redriven
