"""The lifecycle's transitions, each computed once as the `Transition` a store writes.

`submitted`, `claimed`, `finished`, `expired`, `cancelled` and `redriven` return the
value (see `backroom.core.lifecycle` for what its fields write); every store applies
those values and nothing else. `new_job`, `claim`, `heartbeat`, `finish`, `expire`,
`cancel` and `redrive` apply them to a `Job`, refusing (`IllegalTransition`) what the
lifecycle forbids: the reference the store contract tests compare against.
"""

from __future__ import annotations

import dataclasses

from backroom.core.errors import IllegalTransition
from backroom.core.job import AttemptOutcome, Job, JobState, NewJob
from backroom.core.lifecycle import (
    ALLOWED,
    EVERY_RUNNING_FACT,
    LEASE_EXPIRED,
    USUAL,
    AttemptEnd,
    LeaseGrant,
    Reason,
    RunningFacts,
    Transition,
    apply,
    check,
    running_facts,
)
from backroom.core.outcome import (
    Cancelled,
    Deferred,
    Failed,
    Outcome,
    Released,
    RetryAt,
    Succeeded,
)

# ALLOWED, LEASE_EXPIRED and check are the lifecycle's, named here for the reference's users.
__all__ = ["ALLOWED", "LEASE_EXPIRED", "cancel", "cancelled", "check", "claim", "claimed"]
__all__ += ["expire", "expire_cases", "expired", "finish", "finish_cases", "finished"]
__all__ += ["heartbeat", "new_job", "redrive", "redriven", "submitted"]

QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = (
    JobState.QUEUED,
    JobState.RUNNING,
    JobState.SUCCEEDED,
    JobState.FAILED,
    JobState.CANCELLED,
)

# -- the values stores write ----------------------------------------------------------


def submitted(now: int) -> Transition:
    """A submission creating a queued job."""
    return Transition(None, QUEUED, now, Reason.SUBMITTED)


def claimed(now: int, worker_id: str, lease_ms: int) -> Transition:
    """A worker takes a due queued job: a new attempt under a new lease."""
    lease = LeaseGrant(worker_id, now + lease_ms)
    return Transition(QUEUED, RUNNING, now, Reason.CLAIMED, attempt_change=1, lease=lease)


_REQUEUED_ATTEMPTS: dict[type[Outcome], AttemptOutcome] = {
    RetryAt: AttemptOutcome.RETRY,
    Released: AttemptOutcome.INTERRUPTED,
    Deferred: AttemptOutcome.DEFERRED,
}
"""How an attempt ended, for the outcomes that would queue its job again."""


def finished(outcome: Outcome, now: int, facts: RunningFacts) -> Transition:
    """How a running job's attempt ending with `outcome` at `now` changes it.

    A job whose cancellation was asked for while it ran is cancelled rather than
    queued again. A retry asked for with no attempts left fails the job instead: the
    worker should never ask for one, and failing is the only end that keeps its error.
    """
    if facts.cancel_requested and isinstance(outcome, RetryAt | Released | Deferred):
        error = None if isinstance(outcome, Released) else outcome.error
        end = AttemptEnd(_REQUEUED_ATTEMPTS[type(outcome)], error)
        return Transition(
            RUNNING, CANCELLED, now, Reason.CANCELLED, finished_at=now, attempt_end=end
        )
    if isinstance(outcome, RetryAt) and facts.spent:
        outcome = Failed(outcome.error)
    if isinstance(outcome, Succeeded | RetryAt | Failed):
        return _finished_as_asked(outcome, now)
    return _finished_without_error(outcome, now)


def _finished_as_asked(outcome: Succeeded | RetryAt | Failed, now: int) -> Transition:
    """The outcomes that set the job's error (a success clears it)."""
    if isinstance(outcome, Succeeded):
        end = AttemptEnd(AttemptOutcome.SUCCEEDED)
        return Transition(
            RUNNING,
            SUCCEEDED,
            now,
            Reason.SUCCEEDED,
            result=outcome.result,
            keeps_error=False,
            finished_at=now,
            attempt_end=end,
        )
    if isinstance(outcome, RetryAt):
        end = AttemptEnd(AttemptOutcome.RETRY, outcome.error, outcome.at)
        return Transition(
            RUNNING,
            QUEUED,
            now,
            str(outcome.error),
            error=outcome.error,
            keeps_error=False,
            run_at=outcome.at,
            attempt_end=end,
        )
    end = AttemptEnd(AttemptOutcome.FAILED, outcome.error)
    return Transition(
        RUNNING,
        FAILED,
        now,
        str(outcome.error),
        error=outcome.error,
        keeps_error=False,
        finished_at=now,
        attempt_end=end,
    )


def _finished_without_error(outcome: Cancelled | Deferred | Released, now: int) -> Transition:
    """The outcomes that leave the job's error as it was."""
    if isinstance(outcome, Cancelled):
        end = AttemptEnd(AttemptOutcome.CANCELLED)
        return Transition(RUNNING, CANCELLED, now, outcome.reason, finished_at=now, attempt_end=end)
    # A deferred or released job did not really run: its attempt is given back.
    if isinstance(outcome, Deferred):
        end = AttemptEnd(AttemptOutcome.DEFERRED, outcome.error, outcome.run_at)
        return Transition(
            RUNNING,
            QUEUED,
            now,
            outcome.reason,
            run_at=outcome.run_at,
            attempt_change=-1,
            attempt_end=end,
            wait=outcome.wait,
        )
    if isinstance(outcome, Released):
        end = AttemptEnd(AttemptOutcome.INTERRUPTED, next_attempt_at=now)
        return Transition(
            RUNNING, QUEUED, now, outcome.reason, run_at=now, attempt_change=-1, attempt_end=end
        )
    raise IllegalTransition(f"unknown outcome {outcome!r}")


def finish_cases(outcome: Outcome, now: int) -> list[tuple[RunningFacts | None, Transition]]:
    """`finished` for each case of `RunningFacts` the outcome's transition depends on.

    None stands for every case: only an outcome that would queue the job again depends
    on the facts, so any other comes as one transition.
    """
    if not isinstance(outcome, RetryAt | Released | Deferred):
        return [(None, finished(outcome, now, USUAL))]
    return [(facts, finished(outcome, now, facts)) for facts in EVERY_RUNNING_FACT]


def expired(now: int, facts: RunningFacts) -> Transition:
    """A running job whose lease ran out: back to the queue, or failed with no attempts
    left, or cancelled if that was asked for; the attempt counts either way."""
    if facts.cancel_requested or facts.spent:
        target = CANCELLED if facts.cancel_requested else FAILED
        end = AttemptEnd(AttemptOutcome.LEASE_EXPIRED, LEASE_EXPIRED)
        return Transition(
            RUNNING,
            target,
            now,
            str(LEASE_EXPIRED),
            error=LEASE_EXPIRED,
            keeps_error=False,
            finished_at=now,
            attempt_end=end,
        )
    end = AttemptEnd(AttemptOutcome.LEASE_EXPIRED, LEASE_EXPIRED, now)
    return Transition(
        RUNNING,
        QUEUED,
        now,
        str(LEASE_EXPIRED),
        error=LEASE_EXPIRED,
        keeps_error=False,
        run_at=now,
        attempt_end=end,
    )


def expire_cases(now: int) -> list[tuple[RunningFacts, Transition]]:
    """`expired` for every case of `RunningFacts`."""
    return [(facts, expired(now, facts)) for facts in EVERY_RUNNING_FACT]


def cancelled(now: int) -> Transition:
    """A queued job cancelled at once (a running one is only flagged for its worker)."""
    return Transition(QUEUED, CANCELLED, now, Reason.CANCELLED, finished_at=now)


def redriven(now: int) -> Transition:
    """A failed job sent back to the queue with a fresh attempt budget and no error."""
    return Transition(
        FAILED, QUEUED, now, Reason.REDRIVE, keeps_error=False, run_at=now, resets_attempts=True
    )


# -- the same, applied to a Job ---------------------------------------------------------


def new_job(job_id: int, new: NewJob, now: int) -> Job:
    """The queued job a submission creates."""
    return Job(
        id=job_id,
        tenant=new.tenant,
        task=new.task,
        queue=new.queue,
        priority=new.priority,
        state=QUEUED,
        input=new.input,
        attempt=0,
        max_attempts=new.max_attempts,
        timeout_ms=new.timeout_ms,
        run_at=new.run_at,
        created_at=now,
        updated_at=now,
        idempotency_key=new.idempotency_key,
        fingerprint=new.fingerprint,
        metadata=dict(new.metadata),
        lane=new.lane,
        webhook_url=new.webhook_url,
        traceparent=new.traceparent,
    )


def claim(job: Job, now: int, worker_id: str, lease_ms: int) -> Job:
    """A worker takes a due queued job: a new attempt under a new lease token."""
    if job.run_at > now:
        raise IllegalTransition(f"job {job.id} is not due until {job.run_at}")
    return apply(job, claimed(now, worker_id, lease_ms))


def heartbeat(job: Job, now: int, lease_ms: int) -> Job:
    """The lease holder extends its lease; the job stays running (no transition)."""
    if job.state is not RUNNING:
        raise IllegalTransition(f"job {job.id} is {job.state}, not running")
    return dataclasses.replace(job, lease_expires_at=now + lease_ms, updated_at=now)


def finish(job: Job, outcome: Outcome, now: int) -> Job:
    """Apply how the running job's attempt ended; a retry needs an attempt left."""
    if job.state is not RUNNING:
        raise IllegalTransition(f"job {job.id} is {job.state}, not running")
    facts = running_facts(job)
    if isinstance(outcome, RetryAt) and facts.spent and not facts.cancel_requested:
        raise IllegalTransition(f"job {job.id} has no attempts left to retry")
    return apply(job, finished(outcome, now, facts))


def expire(job: Job, now: int) -> Job:
    """A running job whose lease ran out: back to the queue, or failed with no attempts left."""
    if job.state is not RUNNING or job.lease_expires_at is None or job.lease_expires_at > now:
        raise IllegalTransition(f"job {job.id} holds no expired lease")
    return apply(job, expired(now, running_facts(job)))


def cancel(job: Job, now: int) -> Job:
    """Cancel a queued job at once; a running one is only flagged for its worker to stop."""
    if job.state is RUNNING:
        return dataclasses.replace(job, cancel_requested=True, updated_at=now)
    check(job.state, CANCELLED)
    return apply(job, cancelled(now))


def redrive(job: Job, now: int) -> Job:
    """Send a failed job back to the queue with a fresh attempt budget."""
    if job.state is not FAILED:
        raise IllegalTransition(f"job {job.id} is {job.state}, not failed")
    return apply(job, redriven(now))
