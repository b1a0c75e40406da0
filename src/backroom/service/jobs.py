"""The service's operations, free of any web framework: each takes the `App` and a
`Caller` and returns a `Reply` (status, plain-data body, headers), like the seeds'
`get_job_status(queue, job_id) -> (body, status)`. The HTTP API only translates.

Errors are replies too: RFC 9457 problem details built by `problem`. A caller that is
not an admin sees and acts on its own tenant's jobs only; another tenant's job is
"not found", exactly like a job that does not exist.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace

from backroom.app import App
from backroom.core.errors import IdempotencyConflict, QueueFull, StoreError
from backroom.core.job import JSON, Job, JobState
from backroom.core.usage import DailyBudget, day_start, next_day_start
from backroom.service.documents import job_document, usd_text
from backroom.store import JobFilter, RedriveFilter

PROBLEM_TYPE_PREFIX = "urn:backroom:problem:"
"""Problem types are URNs: stable names, not pages to fetch (RFC 9457, section 3.1.1)."""

HTTP_TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    422: "Unprocessable Content",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


@dataclass(frozen=True, slots=True)
class Reply:
    """What an operation answers: a status, a JSON-ready body and response headers."""

    status: int
    body: JSON
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def is_problem(self) -> bool:
        """True when the body is a problem document (any 4xx or 5xx)."""
        return self.status >= 400


def problem(
    status: int,
    detail: str,
    *,
    kind: str | None = None,
    title: str | None = None,
    headers: dict[str, str] | None = None,
    **extensions: JSON,
) -> Reply:
    """An RFC 9457 problem reply; `kind` names a backroom problem type, else about:blank."""
    body: dict[str, JSON] = {
        "type": "about:blank" if kind is None else PROBLEM_TYPE_PREFIX + kind,
        "title": title or HTTP_TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        **extensions,
    }
    return Reply(status, body, headers or {})


def invalid_field(location: Sequence[str | int], message: str) -> Reply:
    """A 422 naming the one field (`("body", "task")`) that is wrong and why."""
    name = ".".join(str(part) for part in location)
    return problem(
        422,
        f"{name}: {message}",
        kind="validation-error",
        title="Invalid request",
        errors=[{"loc": list(location), "msg": message, "type": "value_error"}],
    )


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking: a tenant (with its cap of active jobs and its daily LLM budget),
    or an admin."""

    tenant: str
    admin: bool = False
    max_queued: int | None = None
    daily_budget: DailyBudget | None = None

    @property
    def scope(self) -> str | None:
        """The tenant whose jobs the caller may see; None (every tenant) for an admin."""
        return None if self.admin else self.tenant


@dataclass(frozen=True, slots=True)
class Submission:
    """A job as a client asks for it (the fields of `POST /v1/jobs`)."""

    task: str
    input: JSON
    queue: str | None = None
    priority: int = 0
    max_attempts: int | None = None
    timeout_s: float | None = None
    delay_s: float = 0
    metadata: dict[str, JSON] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SubmitPolicy:
    """The rules a submission is checked against besides its own fields."""

    queues: Collection[str]
    full_retry_after_s: int = 5


@dataclass(frozen=True, slots=True)
class JobQuery:
    """A page of a job listing, newest first; `cursor` is the last page's `next_cursor`."""

    states: Sequence[JobState] = ()
    queue: str | None = None
    task: str | None = None
    cursor: str | None = None
    limit: int = 50


def job_location(job_id: int) -> str:
    """The URL path of a job."""
    return f"/v1/jobs/{job_id}"


def _not_found(job_id: int) -> Reply:
    return problem(404, f"job {job_id} not found")


async def submit_job(
    app: App, caller: Caller, submission: Submission, key: str | None, policy: SubmitPolicy
) -> Reply:
    """Create a job (202), or replay the one `key` already names (200).

    The store checks the tenant's cap in the transaction that would insert the job,
    after the idempotency key: a replay is answered even at the cap, and a refused
    submission (429) stores nothing, so its key stays unused. A new job in a lane (an
    LLM call) is refused (429) while its tenant's daily budget is spent; a replay is not.
    """
    if app.tasks and submission.task not in app.tasks:
        return invalid_field(("body", "task"), f"unknown task {submission.task!r}")
    if submission.queue is not None and submission.queue not in policy.queues:
        known = ", ".join(sorted(policy.queues))
        return invalid_field(("body", "queue"), f"unknown queue {submission.queue!r}; use {known}")
    new = app.new_job(
        submission.task,
        submission.input,
        key=key,
        tenant=caller.tenant,
        queue=submission.queue,
        priority=submission.priority,
        max_attempts=submission.max_attempts,
        timeout_s=submission.timeout_s,
        delay_s=submission.delay_s,
        metadata=submission.metadata,
        max_active=caller.max_queued,
    )
    spent = None
    if caller.daily_budget is not None and new.lane is not None:
        spent = await _budget_spent(app, caller, caller.daily_budget)
        if spent is not None:
            # A spent budget admits no new job: a cap of zero, which the store checks
            # after the idempotency key, so a replay of a job already stored is answered.
            new = replace(new, max_active=0)
    try:
        (result,) = await app.submit_many([new])
    except QueueFull:
        return spent or _queue_full(caller, policy)
    except IdempotencyConflict as conflict:
        return problem(
            422,
            f"Idempotency-Key {conflict.key!r} was already used with a different request body",
            kind="idempotency-conflict",
            title="Idempotency key reused",
            job_id=conflict.job_id,
        )
    headers = {"Location": job_location(result.job.id)}
    if result.created:
        return Reply(202, job_document(result.job), headers)
    return Reply(200, job_document(result.job), {**headers, "Idempotent-Replayed": "true"})


def _queue_full(caller: Caller, policy: SubmitPolicy) -> Reply:
    return problem(
        429,
        f"tenant {caller.tenant!r} has {caller.max_queued} jobs queued or running, its cap",
        kind="queue-full",
        title="Too many queued jobs",
        headers={"Retry-After": str(policy.full_retry_after_s), "Cache-Control": "no-store"},
    )


async def _budget_spent(app: App, caller: Caller, budget: DailyBudget) -> Reply | None:
    """A 429 if the caller has spent today's budget (UTC), retried at the next day."""
    now = app.clock.now()
    spent = await app.store.spent_pico_usd(caller.tenant, day_start(now), next_day_start(now))
    if not budget.exhausted(spent):
        return None
    wait_s = -(-(next_day_start(now) - now) // 1000)
    return problem(
        429,
        f"tenant {caller.tenant!r} has spent ${usd_text(spent)} of its daily LLM budget of "
        f"${usd_text(budget.limit_pico_usd)}; it refills at 00:00 UTC",
        kind="budget-exhausted",
        title="Daily budget spent",
        headers={"Retry-After": str(wait_s), "Cache-Control": "no-store"},
    )


async def get_job(app: App, caller: Caller, job_id: int) -> Reply:
    """The job with its attempt history (and LLM usage, for a job in a lane), or 404."""
    job = await app.store.get(job_id, caller.scope)
    if job is None:
        return _not_found(job_id)
    attempts = await app.store.attempts(job.id)
    usage = None if job.lane is None else await app.store.usage_totals(job.id)
    return Reply(200, job_document(job, attempts, usage))


async def list_jobs(app: App, caller: Caller, query: JobQuery) -> Reply:
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


async def list_dead_letters(app: App, caller: Caller, query: JobQuery) -> Reply:
    """One page of the caller's jobs that failed for good, newest first."""
    failed_only = JobQuery((JobState.FAILED,), query.queue, query.task, query.cursor, query.limit)
    return await list_jobs(app, caller, failed_only)


async def cancel_job(app: App, caller: Caller, job_id: int) -> Reply:
    """Cancel a queued job (200), or ask the worker running it to stop (202).

    Cancelling a cancelled job answers 200 again, so a client may retry it safely; a
    job that already succeeded or failed cannot be cancelled (409).
    """
    job = await app.store.cancel(job_id, app.clock.now(), caller.scope)
    if job is None:
        return _not_found(job_id)
    if job.state is JobState.RUNNING:
        return Reply(202, job_document(job))
    if job.state is JobState.CANCELLED:
        return Reply(200, job_document(job))
    return _conflict(job, "cannot be cancelled")


def _conflict(job: Job, what: str) -> Reply:
    return problem(
        409,
        f"job {job.id} is {job.state} and {what}",
        kind="job-state-conflict",
        title="Job is in the wrong state",
        job_status=str(job.state),
    )


async def redrive_job(app: App, caller: Caller, job_id: int) -> Reply:
    """Send one failed job back to the queue with a fresh attempt budget."""
    job = await app.store.get(job_id, caller.scope)
    if job is None:
        return _not_found(job_id)
    if job.state is not JobState.FAILED:
        return _conflict(job, "only failed jobs can be redriven")
    redriven = await app.redrive(RedriveFilter(tenant=caller.scope, job_ids=(job_id,)))
    if not redriven:
        return _conflict(job, "was redriven by another request")
    return Reply(200, job_document(redriven[0]))


async def redrive_jobs(app: App, caller: Caller, task: str | None, queue: str | None) -> Reply:
    """Send every failed job of the caller (of `task`, of `queue`) back to the queue."""
    redriven = await app.redrive(RedriveFilter(tenant=caller.scope, task=task, queue=queue))
    return Reply(200, {"redriven": len(redriven), "job_ids": [job.id for job in redriven]})


async def readiness(app: App) -> Reply:
    """200 when the store answers a query, 503 when it does not."""
    try:
        await app.store.get(0)
    except StoreError as error:
        return problem(503, f"the store is unreachable: {error}", kind="store-unavailable")
    return Reply(200, {"status": "ready"})


def health() -> Reply:
    """The process is up and serving requests."""
    return Reply(200, {"status": "ok"})
