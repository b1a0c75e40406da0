"""Submitting a job: a `Submission` checked, built into the `NewJob` the store takes,
and stored; for a caller, answered as a `Reply`.

`App.submit` and `App.new_job` delegate here (`enqueue`, `build_job`), so a submission
is shaped into a job in one place whether it comes from the library, the CLI or the API.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Any

from backroom.core.errors import (
    ConfigError,
    IdempotencyConflict,
    InputRefused,
    InvalidJson,
    QueueFull,
    WebhookTargetRefused,
)
from backroom.core.idempotency import fingerprint
from backroom.core.job import DEFAULT_QUEUE, DEFAULT_TENANT, JSON, NewJob, SubmitResult
from backroom.core.plain_json import check_plain_json
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.documents import job_document
from backroom.service.replies import Reply, invalid_field, job_location
from backroom.service.submit_input import checked_lane, refused_input, submitter_caps
from backroom.service.submit_refusals import budget_spent, key_reused, queue_full
from backroom.service.webhooks import prepare_job_webhook
from backroom.tasks import Submitter
from backroom.telemetry.job_log import log_job_change
from backroom.telemetry.tracing import valid_traceparent
from backroom.webhooks.targets import TargetPolicy


@dataclass(frozen=True, slots=True)
class Submission:
    """A job as a client asks for it: the fields of `POST /v1/jobs` and its
    Idempotency-Key, the arguments of `App.submit` and of `backroom submit`."""

    task: str
    input: JSON
    key: str | None = None
    queue: str | None = None
    priority: int = 0
    max_attempts: int | None = None
    timeout_s: float | None = None
    delay_s: float = 0
    metadata: dict[str, JSON] = field(default_factory=dict)
    webhook_url: str | None = None
    traceparent: str | None = None
    """The W3C `traceparent` the submission came with; one that is not valid is
    ignored (a new trace begins), as Trace Context asks."""


@dataclass(frozen=True, slots=True)
class SubmitPolicy:
    """The rules a submission is checked against besides its own fields: the queues
    it may name (None: any), how long a tenant at its cap is told to wait, and where a
    job's `webhook_url` may point."""

    queues: Collection[str] | None = None
    full_retry_after_s: int = 5
    webhooks: TargetPolicy = field(default_factory=TargetPolicy)


def build_job(
    app: AppParts,
    submission: Submission,
    *,
    tenant: str = DEFAULT_TENANT,
    max_active: int | None = None,
    submitter: Submitter | None = None,
) -> NewJob:
    """Validate `submission` and build the `NewJob` the store takes. `max_active` caps
    the tenant's queued and running jobs (`QueueFull` beyond it); `submitter` (default:
    `tenant`, uncapped) is who submits, with its spend caps, for the task's input check.
    Raises `ConfigError` for a task the app does not have (when it has any),
    `InvalidJson` for an input or metadata that is not plain JSON (keys too),
    `InputRefused` for an input the task's check refuses, `ValueError` for attempts < 1,
    a delay < 0 or a timeout under 1 ms."""
    known = app.tasks.get(submission.task)
    if known is None and app.tasks:
        names = ", ".join(app.tasks.names())
        raise ConfigError(f"unknown task {submission.task!r}; known: {names}")
    queue = submission.queue or (known.queue if known and known.queue else DEFAULT_QUEUE)
    policy = known.retry if known is not None and known.retry is not None else app.retry
    attempts = submission.max_attempts or policy.max_attempts
    check_plain_json(submission.input, "input")
    check_plain_json(submission.metadata, "metadata")
    submitter = submitter or Submitter(tenant)
    lane = checked_lane(known, submission.input, submitter)
    timeout_s, delay_s = submission.timeout_s, submission.delay_s
    # A timeout is kept in whole milliseconds: below 1 ms it would round to 0 and every
    # attempt would time out at once.
    if attempts < 1 or delay_s < 0 or (timeout_s is not None and timeout_s < 0.001):
        raise ValueError("max_attempts must be >= 1, delay_s >= 0 and timeout_s >= 0.001")
    return NewJob(
        task=submission.task,
        input=submission.input,
        run_at=app.clock.now() + round(delay_s * 1000),
        tenant=submitter.tenant,
        queue=queue,
        priority=submission.priority,
        max_attempts=attempts,
        timeout_ms=None if timeout_s is None else round(timeout_s * 1000),
        idempotency_key=submission.key,
        fingerprint=_fingerprint(submission, queue, attempts),
        metadata=dict(submission.metadata),
        max_active=max_active,
        lane=lane,
        webhook_url=submission.webhook_url,
        traceparent=valid_traceparent(submission.traceparent),
    )


def _fingerprint(submission: Submission, queue: str, attempts: int) -> str | None:
    """What a repeat of the key must match: the task, input and options as resolved."""
    if submission.key is None:
        return None
    return fingerprint(submission.task, submission.input, key_options(submission, queue, attempts))


def key_options(submission: Submission, queue: str, attempts: int) -> dict[str, Any]:
    """The options a repeat of a key must match besides the task and the input."""
    return {
        "queue": queue,
        "priority": submission.priority,
        "max_attempts": attempts,
        "timeout_s": submission.timeout_s,
        "delay_s": submission.delay_s,
        "metadata": submission.metadata,
    }


async def enqueue(
    app: AppParts,
    submission: Submission,
    *,
    tenant: str = DEFAULT_TENANT,
    max_active: int | None = None,
) -> SubmitResult:
    """Store the job; with a key, a repeat returns the first job (`created=False`).

    Raises `IdempotencyConflict` when the key was used with a different submission,
    and `QueueFull` when the tenant is at `max_active`.
    """
    if submission.webhook_url is not None:
        await prepare_job_webhook(app, tenant, submission.webhook_url, TargetPolicy())
    submitter = await submitter_caps(app, submission.task, tenant)
    job = build_job(app, submission, submitter=submitter, max_active=max_active)
    result = await app.store.submit(job, app.clock.now())
    if result.created:
        log_job_change(result.job, "job.submitted", f"submitted to queue {result.job.queue}")
    return result


async def submit_job(
    app: AppParts, caller: Caller, submission: Submission, policy: SubmitPolicy
) -> Reply:
    """Create a job (202), or replay the one the submission's key already names (200).

    The store checks the tenant's cap in the transaction that would insert the job,
    after the idempotency key: a replay is answered even at the cap, and a refused
    submission (429) stores nothing, so its key stays unused. A new job in a lane (an
    LLM call) is refused (429) while its tenant's daily budget is spent; a replay is not.
    """
    prepared = await prepare_job(app, caller, submission, policy)
    if isinstance(prepared, Reply):
        return prepared
    return await store_one(app, caller, prepared, policy)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A submission that passed its checks: the job to store, and the 429 to answer
    if the store refuses it because its tenant's budget is spent (None: the cap's)."""

    job: NewJob
    spent: Reply | None = None


class BudgetCheck:
    """Whether the caller has spent today's LLM budget: asked of the store once, by the
    first job in a lane (a batch's jobs share the answer)."""

    def __init__(self, app: AppParts, caller: Caller) -> None:
        self._app = app
        self._caller = caller
        self._answer: tuple[Reply | None] | None = None

    async def spent(self) -> Reply | None:
        """The 429 a new job in a lane earns, or None while budget is left."""
        budget = self._caller.daily_budget
        if budget is None:
            return None
        if self._answer is None:
            self._answer = (await budget_spent(self._app, self._caller, budget),)
        return self._answer[0]


async def prepare_job(
    app: AppParts,
    caller: Caller,
    submission: Submission,
    policy: SubmitPolicy,
    budget: BudgetCheck | None = None,
) -> Prepared | Reply:
    """Check `submission` and build its job, as `submit_job` does before storing it;
    the 422 it earns when a check fails."""
    if submission.webhook_url is not None:
        invalid = _invalid(app, submission, policy)
        if invalid is not None:
            return invalid
        try:
            await prepare_job_webhook(app, caller.tenant, submission.webhook_url, policy.webhooks)
        except WebhookTargetRefused as refused:
            return invalid_field(("body", "webhook_url"), str(refused))
    new = checked_job(app, caller, submission, policy)
    if isinstance(new, Reply):
        return new
    return await budgeted(app, caller, new, budget)


def checked_job(
    app: AppParts,
    caller: Caller,
    submission: Submission,
    policy: SubmitPolicy,
    submitter: Submitter | None = None,
) -> NewJob | Reply:
    """`prepare_job` but for the webhook URL and the budget, which need the store: the
    job `submission` asks for (its caller is `submitter`, default `caller.submitter()`),
    or the 422 its task, queue or input earn."""
    invalid = _invalid(app, submission, policy)
    if invalid is not None:
        return invalid
    try:
        return build_job(
            app,
            submission,
            submitter=submitter or caller.submitter(),
            max_active=caller.max_queued,
        )
    except (InvalidJson, InputRefused) as error:
        return refused_input(error)


async def budgeted(
    app: AppParts, caller: Caller, new: NewJob, budget: BudgetCheck | None = None
) -> Prepared:
    """`new` ready to store: a job in a lane is refused while the caller's daily budget
    is spent (asked of `budget`, which a batch's jobs share)."""
    if new.lane is None:
        return Prepared(new)
    spent = await (budget or BudgetCheck(app, caller)).spent()
    if spent is None:
        return Prepared(new)
    # A spent budget admits no new job: a cap of zero, which the store checks after
    # the idempotency key, so a replay of a job already stored is answered.
    return Prepared(replace(new, max_active=0), spent)


async def store_one(
    app: AppParts, caller: Caller, prepared: Prepared, policy: SubmitPolicy
) -> Reply:
    """Store one prepared job: 202, 200 for a replay, or the refusal (429, 422) it earns."""
    try:
        result = await app.store.submit(prepared.job, app.clock.now())
    except QueueFull:
        return prepared.spent or queue_full(caller, policy.full_retry_after_s)
    except IdempotencyConflict as conflict:
        return key_reused(conflict)
    return submitted(result)


def submitted(result: SubmitResult) -> Reply:
    """202 with a new job, or 200 with the job a repeated key names."""
    headers = {"Location": job_location(result.job.id)}
    if result.created:
        return Reply(202, job_document(result.job), headers)
    return Reply(200, job_document(result.job), {**headers, "Idempotent-Replayed": "true"})


def _invalid(app: AppParts, submission: Submission, policy: SubmitPolicy) -> Reply | None:
    """A 422 for a task the app does not have or a queue the policy does not allow."""
    if app.tasks and submission.task not in app.tasks:
        return invalid_field(("body", "task"), f"unknown task {submission.task!r}")
    queues = policy.queues
    if submission.queue is not None and queues is not None and submission.queue not in queues:
        known = ", ".join(sorted(queues))
        return invalid_field(("body", "queue"), f"unknown queue {submission.queue!r}; use {known}")
    return None
