"""The job lifecycle as pure functions: each takes a job and `now` and returns the new job.

    queued --claim--> running --succeed--> succeeded
       ^                 |  \\--fail-----> failed --redrive--> queued
       |                 |   \\-cancel---> cancelled
       \\--retry/expire--/
    queued --cancel--> cancelled

The only way back from running is to queued, after a retryable failure (or an expired
lease, a release at shutdown, or a deferral while its lane is busy) with attempts
left. Stores apply the same changes in SQL, guarded by the lease token; these
functions are the reference they are tested against, and raise `IllegalTransition`
for anything the lifecycle forbids.
"""

from __future__ import annotations

import dataclasses

from backroom.core.errors import IllegalTransition
from backroom.core.job import ErrorInfo, Job, JobState, NewJob
from backroom.core.outcome import (
    Cancelled,
    Deferred,
    Failed,
    Outcome,
    Released,
    RetryAt,
    Succeeded,
)

Q, R, S, F, C = (
    JobState.QUEUED,
    JobState.RUNNING,
    JobState.SUCCEEDED,
    JobState.FAILED,
    JobState.CANCELLED,
)

ALLOWED: frozenset[tuple[JobState, JobState]] = frozenset(
    {(Q, R), (R, S), (R, F), (R, C), (R, Q), (Q, C), (F, Q)}
)
"""Every (from, to) pair the lifecycle allows; failed -> queued is a redrive."""

LEASE_EXPIRED = ErrorInfo("LeaseExpired", "the worker's lease expired before it finished")


def check(source: JobState, target: JobState) -> None:
    """Raise `IllegalTransition` unless `source -> target` is allowed."""
    if (source, target) not in ALLOWED:
        raise IllegalTransition(f"a job cannot go from {source} to {target}")


def new_job(job_id: int, new: NewJob, now: int) -> Job:
    """The queued job a submission creates."""
    return Job(
        id=job_id,
        tenant=new.tenant,
        task=new.task,
        queue=new.queue,
        priority=new.priority,
        state=Q,
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
    )


def _move(job: Job, target: JobState, now: int, **changes: object) -> Job:
    check(job.state, target)
    return dataclasses.replace(job, state=target, updated_at=now, **changes)  # type: ignore[arg-type]


def claim(job: Job, now: int, worker_id: str, lease_ms: int) -> Job:
    """A worker takes a due queued job: a new attempt under a new lease token."""
    if job.run_at > now:
        raise IllegalTransition(f"job {job.id} is not due until {job.run_at}")
    return _move(
        job,
        R,
        now,
        attempt=job.attempt + 1,
        lease_token=job.lease_token + 1,
        lease_expires_at=now + lease_ms,
        worker_id=worker_id,
        started_at=now,
        cancel_requested=False,
    )


def heartbeat(job: Job, now: int, lease_ms: int) -> Job:
    """The lease holder extends its lease; the job stays running."""
    if job.state is not R:
        raise IllegalTransition(f"job {job.id} is {job.state}, not running")
    return dataclasses.replace(job, lease_expires_at=now + lease_ms, updated_at=now)


def _release_lease(job: Job, target: JobState, now: int, **changes: object) -> Job:
    return _move(job, target, now, lease_expires_at=None, worker_id=None, **changes)


def finish(job: Job, outcome: Outcome, now: int) -> Job:
    """Apply how the running job's attempt ended."""
    if job.state is not R:
        raise IllegalTransition(f"job {job.id} is {job.state}, not running")
    if isinstance(outcome, Succeeded):
        return _release_lease(job, S, now, result=outcome.result, finished_at=now, error=None)
    if job.cancel_requested and isinstance(outcome, RetryAt | Released | Deferred):
        # Cancellation was asked for while it ran: it must not run again.
        return _release_lease(job, C, now, finished_at=now)
    if isinstance(outcome, RetryAt):
        if job.attempts_left == 0:
            raise IllegalTransition(f"job {job.id} has no attempts left to retry")
        return _release_lease(job, Q, now, run_at=outcome.at, error=outcome.error)
    if isinstance(outcome, Failed):
        return _release_lease(job, F, now, error=outcome.error, finished_at=now)
    if isinstance(outcome, Cancelled):
        return _release_lease(job, C, now, finished_at=now)
    if isinstance(outcome, Released):
        return _release_lease(job, Q, now, run_at=now, attempt=job.attempt - 1)
    if isinstance(outcome, Deferred):
        return _release_lease(job, Q, now, run_at=outcome.run_at, attempt=job.attempt - 1)
    raise IllegalTransition(f"unknown outcome {outcome!r}")


def expire(job: Job, now: int) -> Job:
    """A running job whose lease ran out: back to the queue, or failed with no attempts left."""
    if job.state is not R or job.lease_expires_at is None or job.lease_expires_at > now:
        raise IllegalTransition(f"job {job.id} holds no expired lease")
    if job.cancel_requested:
        return _release_lease(job, C, now, error=LEASE_EXPIRED, finished_at=now)
    if job.attempts_left == 0:
        return _release_lease(job, F, now, error=LEASE_EXPIRED, finished_at=now)
    return _release_lease(job, Q, now, run_at=now, error=LEASE_EXPIRED)


def cancel(job: Job, now: int) -> Job:
    """Cancel a queued job at once; a running one is only flagged for its worker to stop."""
    if job.state is R:
        return dataclasses.replace(job, cancel_requested=True, updated_at=now)
    return _move(job, C, now, finished_at=now)


def redrive(job: Job, now: int) -> Job:
    """Send a failed job back to the queue with a fresh attempt budget."""
    if job.state is not F:
        raise IllegalTransition(f"job {job.id} is {job.state}, not failed")
    return _move(
        job, Q, now, attempt=0, run_at=now, finished_at=None, error=None, cancel_requested=False
    )
