"""Reading jobs for a person (the dashboard): pages of typed jobs under any filter, one
job with everything known about it, dead letters grouped.

Like every operation, each applies the caller's scope: a tenant sees its own jobs
only, and another tenant's job is "not found". An admin may narrow to one tenant.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from backroom.core.job import JSON, Attempt, Job, JobEvent
from backroom.core.usage import AttemptUsage, UsageTotals
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.webhooks import list_deliveries
from backroom.store.insight_protocol import DeadLetterGroup
from backroom.store.records import JobFilter

__all__ = ["DeadLetterGroup", "JobDetail", "JobFilter", "JobPage"]


@dataclass(frozen=True, slots=True)
class JobPage:
    """One page of jobs, newest first, and the cursor of the next (None: the last)."""

    jobs: tuple[Job, ...]
    next_cursor: int | None


@dataclass(frozen=True, slots=True)
class JobDetail:
    """A job with its attempts, its transitions, what its LLM calls used (None: it is in
    no lane), and its webhook deliveries as plain data."""

    job: Job
    attempts: tuple[Attempt, ...]
    events: tuple[JobEvent, ...]
    usage: UsageTotals | None
    deliveries: tuple[JSON, ...]
    feed_position: str
    """The event feed's position just before the job was read: a live view of the job
    follows its events from there."""
    attempt_usage: dict[int, AttemptUsage] = dataclasses.field(default_factory=dict)
    """What each attempt's LLM call used and cost, by the attempt's lease token (its
    number is not unique: a redrive starts it again)."""


def scoped(caller: Caller, where: JobFilter) -> JobFilter:
    """`where` narrowed to the caller's tenant (an admin keeps the tenant it chose)."""
    if caller.scope is None:
        return where
    return dataclasses.replace(where, tenant=caller.scope)


async def job_page(app: AppParts, caller: Caller, where: JobFilter) -> JobPage:
    """The page of the caller's jobs `where` selects, and the next page's cursor."""
    asked = scoped(caller, where)
    jobs = await app.store.list_jobs(dataclasses.replace(asked, limit=asked.limit + 1))
    page = tuple(jobs[: asked.limit])
    return JobPage(page, page[-1].id if len(jobs) > asked.limit else None)


async def job_detail(app: AppParts, caller: Caller, job_id: int) -> JobDetail | None:
    """Everything known about the caller's job `job_id`, or None (also another tenant's)."""
    position = await app.store.feed_head()
    job = await app.store.get(job_id, caller.scope)
    if job is None:
        return None
    deliveries = await list_deliveries(app, caller, job_id)
    body = deliveries.body if isinstance(deliveries.body, dict) else {}
    listed = body.get("deliveries")
    return JobDetail(
        job,
        tuple(await app.store.attempts(job_id)),
        tuple(await app.store.events(job_id)),
        None if job.lane is None else await app.store.usage_totals(job_id),
        tuple(listed) if isinstance(listed, list) else (),
        position.token(),
        {usage.lease_token: usage for usage in await app.store.attempt_usages(job_id)},
    )


async def dead_letter_groups(
    app: AppParts, caller: Caller, tenant: str | None
) -> list[DeadLetterGroup]:
    """The caller's failed jobs grouped by task and error class, largest group first."""
    return await app.store.dead_letter_groups(caller.scope if caller.scope else tenant)
