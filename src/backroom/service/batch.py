"""Acting on many jobs at once: cancel, redrive or delete a selection, or every job a
filter matches (up to a bound, so one click cannot start an unbounded walk of the store)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from backroom.core.errors import JobNotFound
from backroom.core.job import JobState
from backroom.service.callers import Caller
from backroom.service.cancel import request_cancel
from backroom.service.context import AppParts
from backroom.service.redrive import redrive_failed
from backroom.store.records import JobFilter, RedriveFilter

MAX_BATCH = 10_000
"""The most jobs one batch action touches."""


class BatchAction(enum.StrEnum):
    """What a batch does to each job."""

    CANCEL = "cancel"
    REDRIVE = "redrive"
    DELETE = "delete"


@dataclass(frozen=True, slots=True)
class BatchReport:
    """How many of the asked jobs the action changed, and how many it passed over (gone,
    another tenant's, or in a state the action does not apply to)."""

    action: BatchAction
    changed: int
    skipped: int


async def matching_ids(app: AppParts, caller: Caller, where: JobFilter) -> list[int]:
    """The ids of every job `where` matches among the caller's, newest first, at most
    `MAX_BATCH` (the caller's scope always narrows the filter)."""
    scope = caller.scope if caller.scope is not None else where.tenant
    ids: list[int] = []
    cursor = where.before_id
    while len(ids) < MAX_BATCH:
        page_where = JobFilter(
            scope,
            where.states,
            where.queue,
            where.task,
            cursor,
            min(1_000, MAX_BATCH - len(ids)),
            where.created_from,
            where.created_until,
            where.search,
        )
        page = await app.store.list_jobs(page_where)
        ids += [job.id for job in page]
        if len(page) < page_where.limit:
            break
        cursor = page[-1].id
    return ids


async def act_on_jobs(
    app: AppParts, caller: Caller, action: BatchAction, job_ids: Sequence[int]
) -> BatchReport:
    """Cancel, redrive or delete the caller's jobs among `job_ids` (others are skipped:
    only failed jobs are redriven, only finished ones deleted)."""
    wanted = list(dict.fromkeys(job_ids))[:MAX_BATCH]
    if action is BatchAction.DELETE:
        deleted = await app.store.delete_jobs(wanted, caller.scope)
        return BatchReport(action, deleted, len(wanted) - deleted)
    if action is BatchAction.REDRIVE:
        redriven = await redrive_failed(app, RedriveFilter(tenant=caller.scope, job_ids=wanted))
        return BatchReport(action, len(redriven), len(wanted) - len(redriven))
    changed = 0
    for job_id in wanted:
        try:
            job = await request_cancel(app, job_id, caller.scope)
        except JobNotFound:
            continue
        # A running job's worker was asked to stop it: that counts as done here.
        stopping = job.state is JobState.RUNNING and job.cancel_requested
        changed += job.state is JobState.CANCELLED or stopping
    return BatchReport(action, changed, len(wanted) - changed)


async def group_ids(
    app: AppParts, caller: Caller, tenant: str | None, task: str, error_kind: str | None
) -> list[int]:
    """The ids of the caller's failed jobs of `task` whose error class is `error_kind`
    (None: jobs failed without one), newest first, at most `MAX_BATCH`."""
    scope = caller.scope if caller.scope is not None else tenant
    ids: list[int] = []
    cursor = None
    while len(ids) < MAX_BATCH:
        where = JobFilter(scope, (JobState.FAILED,), task=task, before_id=cursor, limit=1_000)
        page = await app.store.list_jobs(where)
        kind = error_kind or None
        ids += [job.id for job in page if (job.error.kind if job.error else None) == kind]
        if len(page) < where.limit:
            break
        cursor = page[-1].id
    return ids[:MAX_BATCH]
