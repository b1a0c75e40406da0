"""Cancelling a job: at once while it is queued, by asking its worker while it runs."""

from __future__ import annotations

from backroom.core.errors import JobNotFound
from backroom.core.job import Job, JobState
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.documents import job_document
from backroom.service.replies import Reply, job_not_found, state_conflict
from backroom.telemetry.job_log import log_job_change


async def request_cancel(app: AppParts, job_id: int, tenant: str | None = None) -> Job:
    """Cancel a queued job at once, or ask the worker running it to stop; the job after.

    Raises `JobNotFound` for a job that does not exist (or is another tenant's).
    """
    now = app.clock.now()
    job = await app.store.cancel(job_id, now, tenant)
    if job is None:
        raise JobNotFound(job_id)
    if job.state is JobState.RUNNING:
        log_job_change(job, "job.cancel_requested", "cancel requested: its worker stops it")
    elif job.state is JobState.CANCELLED and job.finished_at == now:  # not a repeat
        log_job_change(job, "job.cancelled", "cancelled")
    return job


async def cancel_job(app: AppParts, caller: Caller, job_id: int) -> Reply:
    """Cancel a queued job (200), or ask the worker running it to stop (202).

    Cancelling a cancelled job answers 200 again, so a client may retry it safely; a
    job that already succeeded or failed cannot be cancelled (409).
    """
    try:
        job = await request_cancel(app, job_id, caller.scope)
    except JobNotFound:
        return job_not_found(job_id)
    if job.state is JobState.RUNNING:
        return Reply(202, job_document(job))
    if job.state is JobState.CANCELLED:
        return Reply(200, job_document(job))
    return state_conflict(job, "cannot be cancelled")
