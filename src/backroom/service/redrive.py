"""Redriving: failed jobs sent back to the queue with a fresh attempt budget."""

from __future__ import annotations

from backroom.core.job import Job, JobState
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.documents import job_document
from backroom.service.replies import Reply, job_not_found, state_conflict
from backroom.store import RedriveFilter
from backroom.telemetry.job_log import log_job_change


async def redrive_failed(app: AppParts, where: RedriveFilter) -> list[Job]:
    """Send the failed jobs `where` names back to the queue; the jobs redriven."""
    redriven = await app.store.redrive(where, app.clock.now())
    for job in redriven:
        log_job_change(job, "job.redriven", "redriven: back in the queue")
    return redriven


async def redrive_job(app: AppParts, caller: Caller, job_id: int) -> Reply:
    """Send one failed job back to the queue (200); 404 or 409 for any other."""
    job = await app.store.get(job_id, caller.scope)
    if job is None:
        return job_not_found(job_id)
    if job.state is not JobState.FAILED:
        return state_conflict(job, "only failed jobs can be redriven")
    redriven = await redrive_failed(app, RedriveFilter(tenant=caller.scope, job_ids=(job_id,)))
    if not redriven:
        return state_conflict(job, "was redriven by another request")
    return Reply(200, job_document(redriven[0]))


async def redrive_jobs(app: AppParts, caller: Caller, task: str | None, queue: str | None) -> Reply:
    """Send every failed job of the caller (of `task`, of `queue`) back to the queue."""
    redriven = await redrive_failed(app, RedriveFilter(tenant=caller.scope, task=task, queue=queue))
    return Reply(200, {"redriven": len(redriven), "job_ids": [job.id for job in redriven]})
