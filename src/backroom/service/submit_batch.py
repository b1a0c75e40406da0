"""Submitting up to 1,000 jobs in one call (`POST /v1/jobs:batch`), each answered alone.

Each job is checked and built exactly as a single submission is (`prepare_job`), and
gets the answer a single submission would: 202 with its new job, 200 with the job
its idempotency key already names, or a problem of its own. The jobs that pass their
checks are stored in one `submit_many` call, one transaction. When the store refuses
one of them (its tenant at the cap, its daily budget spent, a key reused with another
body), that transaction stores nothing, and each job is then stored on its own, in
order, so that only the refused ones are refused: the caps count the jobs before them.
"""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core.errors import IdempotencyConflict, QueueFull
from backroom.core.job import JSON
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.replies import Reply
from backroom.service.submit import (
    BudgetCheck,
    Prepared,
    Submission,
    SubmitPolicy,
    prepare_job,
    store_one,
    submitted,
)

MAX_BATCH = 1_000
"""The most jobs one batch may carry."""

Item = Submission | Reply
"""A batch entry as the API read it: a submission, or the 422 its fields earned."""


async def submit_batch(
    app: AppParts, caller: Caller, items: Sequence[Item], policy: SubmitPolicy
) -> Reply:
    """Submit every job of the batch; 200 with each one's answer (`results`), in order."""
    budget = BudgetCheck(app, caller)
    prepared: list[Prepared | Reply] = [
        item if isinstance(item, Reply) else await prepare_job(app, caller, item, policy, budget)
        for item in items
    ]
    jobs = [entry.job for entry in prepared if isinstance(entry, Prepared)]
    try:
        stored = iter(await app.store.submit_many(jobs, app.clock.now()))
    except (QueueFull, IdempotencyConflict):
        replies = [
            entry if isinstance(entry, Reply) else await store_one(app, caller, entry, policy)
            for entry in prepared
        ]
    else:
        replies = [
            entry if isinstance(entry, Reply) else submitted(next(stored)) for entry in prepared
        ]
    return Reply(200, {"results": [_result(reply) for reply in replies]})


def _result(reply: Reply) -> JSON:
    """One job's entry in the answer: its status, and its job or its problem."""
    if not reply.is_problem:
        return {"status": reply.status, "job": reply.body}
    entry: dict[str, JSON] = {"status": reply.status, "problem": reply.body}
    retry_after = reply.headers.get("Retry-After")
    if retry_after is not None:
        entry["retry_after_s"] = int(retry_after)
    return entry
