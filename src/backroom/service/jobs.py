"""Reading jobs: one job with its history, and pages of a listing, newest first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from backroom.core.errors import JobNotFound
from backroom.core.job import Job, JobState
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.documents import job_document
from backroom.service.provider_batches import provider_batch_of
from backroom.service.replies import Reply, job_not_found
from backroom.store import JobFilter


@dataclass(frozen=True, slots=True)
class JobQuery:
    """A page of a job listing, newest first; `cursor` is the last page's `next_cursor`."""

    states: Sequence[JobState] = ()
    queue: str | None = None
    task: str | None = None
    cursor: str | None = None
    limit: int = 50


async def find_job(app: AppParts, job_id: int, tenant: str | None = None) -> Job:
    """The job, or `JobNotFound` (also for another tenant's job, given `tenant`)."""
    job = await app.store.get(job_id, tenant)
    if job is None:
        raise JobNotFound(job_id)
    return job


async def get_job(app: AppParts, caller: Caller, job_id: int) -> Reply:
    """The job with its attempt history (and LLM usage, for a job in a lane; the
    provider batch holding it, for a job offloaded to one), or 404."""
    try:
        job = await find_job(app, job_id, caller.scope)
    except JobNotFound:
        return job_not_found(job_id)
    attempts = await app.store.attempts(job.id)
    usage = None if job.lane is None else await app.store.usage_totals(job.id)
    document = job_document(job, attempts, usage)
    provider_batch = await provider_batch_of(app, job)
    if provider_batch is not None:
        document["provider_batch"] = provider_batch
    return Reply(200, document)


async def list_jobs(app: AppParts, caller: Caller, query: JobQuery) -> Reply:
    """One page of the caller's jobs, newest first, and the cursor of the next page."""
    where = JobFilter(
        caller.scope,
        states=tuple(query.states),
        queue=query.queue,
        task=query.task,
        before_id=None if query.cursor is None else int(query.cursor),
        limit=query.limit + 1,  # one more than asked tells whether another page exists
    )
    jobs = await app.store.list_jobs(where)
    page = jobs[: query.limit]
    more = len(jobs) > query.limit
    return Reply(
        200,
        {
            "jobs": [job_document(job) for job in page],
            "next_cursor": str(page[-1].id) if more else None,
        },
    )


async def list_dead_letters(app: AppParts, caller: Caller, query: JobQuery) -> Reply:
    """One page of the caller's jobs that failed for good, newest first."""
    failed_only = JobQuery((JobState.FAILED,), query.queue, query.task, query.cursor, query.limit)
    return await list_jobs(app, caller, failed_only)
