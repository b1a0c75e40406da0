"""Submitting up to 1,000 jobs in one call (`POST /v1/jobs:batch`), each answered alone.

Each job is checked and built exactly as a single submission is (`checked_job`, and
`prepare_job` for one with a webhook URL), and gets the answer a single submission
would: 202 with its new job, 200 with the job its idempotency key already names, or a
problem of its own. The jobs that pass their checks are stored in one `submit_many`
call, one transaction. When the store refuses one of them (its tenant at the cap, its
daily budget spent, a key reused with another body), that transaction stores nothing,
and each job is then stored on its own, in order, so that only the refused ones are
refused: the caps count the jobs before them.

The checks that need no store (task, queue, input) run without a coroutine per job,
for the caller once; the answer is built from each job's document directly.
"""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core.errors import IdempotencyConflict, QueueFull
from backroom.core.job import JSON, NewJob
from backroom.core.job_batch import SubmittedJobs
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.documents import job_document, queued_document
from backroom.service.replies import Reply
from backroom.service.submit import (
    BudgetCheck,
    Prepared,
    Submission,
    SubmitPolicy,
    budgeted,
    checked_job,
    prepare_job,
    store_one,
)

MAX_BATCH = 1_000
"""The most jobs one batch may carry."""

Item = Submission | Reply
"""A batch entry as the API read it: a submission, or the 422 its fields earned."""


async def submit_batch(
    app: AppParts, caller: Caller, items: Sequence[Item], policy: SubmitPolicy
) -> Reply:
    """Submit every job of the batch; 200 with each one's answer (`results`), in order."""
    prepared = await _prepare(app, caller, items, policy)
    jobs = [entry.job for entry in prepared if isinstance(entry, Prepared)]
    now = app.clock.now()
    try:
        submitted = await app.store.submit_many(jobs, now)
    except (QueueFull, IdempotencyConflict):
        results = [
            _result(
                entry if isinstance(entry, Reply) else await store_one(app, caller, entry, policy)
            )
            for entry in prepared
        ]
    else:
        answers = iter(_answers(jobs, submitted, now))
        results = [
            _result(entry) if isinstance(entry, Reply) else next(answers) for entry in prepared
        ]
    return Reply(200, {"results": results})


async def _prepare(
    app: AppParts, caller: Caller, items: Sequence[Item], policy: SubmitPolicy
) -> list[Prepared | Reply]:
    """Each item checked and built, as `prepare_job` would, in order."""
    budget = BudgetCheck(app, caller)
    submitter = caller.submitter()
    prepared: list[Prepared | Reply] = []
    for item in items:
        if isinstance(item, Reply):
            prepared.append(item)
        elif item.webhook_url is not None:
            prepared.append(await prepare_job(app, caller, item, policy, budget))
        else:
            new = checked_job(app, caller, item, policy, submitter)
            if isinstance(new, Reply):
                prepared.append(new)
            elif new.lane is None:
                prepared.append(Prepared(new))
            else:
                prepared.append(await budgeted(app, caller, new, budget))
    return prepared


def _answers(jobs: Sequence[NewJob], submitted: SubmittedJobs, now: int) -> list[JSON]:
    """Each stored job's entry: 202 and the job `jobs[n]` became (its document built
    from it, no `Job`), or 200 and the job its key names."""
    return [
        {"status": 202, "job": queued_document(job_id, new, now)}
        if created
        else {"status": 200, "job": job_document(submitted[n].job)}
        for n, (job_id, created, new) in enumerate(
            zip(submitted.ids, submitted.created, jobs, strict=True)
        )
    ]


def _result(reply: Reply) -> JSON:
    """One job's entry in the answer: its status, and its job or its problem."""
    if not reply.is_problem:
        return {"status": reply.status, "job": reply.body}
    entry: dict[str, JSON] = {"status": reply.status, "problem": reply.body}
    retry_after = reply.headers.get("Retry-After")
    if retry_after is not None:
        entry["retry_after_s"] = int(retry_after)
    return entry
