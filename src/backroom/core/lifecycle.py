"""The job lifecycle as values: each transition is a `Transition` a store writes as it is.

    queued --claim--> running --succeed--> succeeded
       ^                 |  \\--fail-----> failed --redrive--> queued
       |                 |   \\-cancel---> cancelled
       \\--retry/expire--/
    queued --cancel--> cancelled

Every change of a job's state is computed here, once, as a frozen `Transition`: the
job's new state and columns, the attempt it ends (or the lease it grants) and the event
it logs. Each store turns a transition's fields into one SQL statement per kind of
change (submit, claim, ending an attempt, cancel, redrive); `apply` makes the same
change to a `Job` value (the in-memory store and the tests' reference do that). A new
state, or a side effect of every transition, is added here and in the statements that
write the fields.

What ends an attempt can depend on two facts only the store knows at the moment it
writes (`RunningFacts`: was it the job's last attempt, was its cancellation asked for).
A store that reads them first asks `finished`/`expired` for the one transition; a store
that decides in SQL sends `finish_cases`/`expire_cases` and lets each job join the case
that fits it.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

from backroom.core.errors import IllegalTransition
from backroom.core.job import JSON, AttemptOutcome, ErrorInfo, Job, JobEvent, JobState, WaitReason

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


class Reason(enum.StrEnum):
    """The reason logged with a transition that has no error or caller's words to tell."""

    SUBMITTED = "submitted"
    CLAIMED = "claimed"
    SUCCEEDED = "succeeded"
    CANCELLED = "cancelled"
    REDRIVE = "redrive"


@dataclass(frozen=True, slots=True)
class AttemptEnd:
    """How the attempt a transition ends is recorded on its attempt row."""

    outcome: AttemptOutcome
    error: ErrorInfo | None = None
    next_attempt_at: int | None = None


@dataclass(frozen=True, slots=True)
class LeaseGrant:
    """The lease a claim grants: the next fencing token, held by `worker_id` until `expires_at`."""

    worker_id: str
    expires_at: int


@dataclass(frozen=True, slots=True)
class Transition:
    """One change of a job's state, as the write a store applies.

    The job gets `state = target`, `updated_at = at`, `result` and `finished_at`; its
    error becomes `error` unless `keeps_error`; `run_at=None` keeps its due time;
    `attempt_change` is added to its attempt count, which `resets_attempts` sets to 0
    instead. A `lease` starts an attempt under a new token (and clears a cancellation
    request); an `attempt_end` closes the running attempt and frees its lease, and
    sets the job's `wait_reason` to `wait` (an attempt that could not start: the job
    keeps its `waiting_since`, or starts it at the due time it had; any other end
    clears both). Every transition logs `event(job_id)`.
    """

    source: JobState | None
    target: JobState
    at: int
    reason: str
    result: JSON = None
    error: ErrorInfo | None = None
    keeps_error: bool = True
    run_at: int | None = None
    finished_at: int | None = None
    attempt_change: int = 0
    resets_attempts: bool = False
    lease: LeaseGrant | None = None
    attempt_end: AttemptEnd | None = None
    wait: WaitReason | None = None

    def granted_lease(self) -> LeaseGrant:
        """The lease a claim grants; raises `IllegalTransition` for any other transition."""
        if self.lease is None:
            raise IllegalTransition(f"{self.source} -> {self.target} grants no lease")
        return self.lease

    def event(self, job_id: int) -> JobEvent:
        """The event this transition logs for job `job_id`."""
        return JobEvent(job_id, self.at, self.source, self.target, self.reason)


@dataclass(frozen=True, slots=True)
class RunningFacts:
    """What ending a running job's attempt depends on besides how it ended."""

    spent: bool
    """The attempt was the job's last (no attempts left)."""
    cancel_requested: bool
    """Cancellation was asked for while it ran: it must not run again."""


EVERY_RUNNING_FACT = tuple(
    RunningFacts(spent, cancel_requested)
    for spent in (False, True)
    for cancel_requested in (False, True)
)
"""Every combination of `RunningFacts`, for stores that let each job pick its case."""

USUAL = RunningFacts(spent=False, cancel_requested=False)
"""A running job with attempts left whose cancellation nobody asked for."""


def check(source: JobState, target: JobState) -> None:
    """Raise `IllegalTransition` unless `source -> target` is allowed."""
    if (source, target) not in ALLOWED:
        raise IllegalTransition(f"a job cannot go from {source} to {target}")


def running_facts(job: Job) -> RunningFacts:
    """The facts ending the running `job`'s attempt depends on."""
    return RunningFacts(spent=job.attempts_left == 0, cancel_requested=job.cancel_requested)


def apply(job: Job, transition: Transition) -> Job:
    """`job` after `transition`; raises `IllegalTransition` if it is not in the lifecycle."""
    check(job.state, transition.target)
    if transition.source is not job.state:
        raise IllegalTransition(f"job {job.id} is {job.state}, not {transition.source}")
    changes: dict[str, object] = {
        "state": transition.target,
        "updated_at": transition.at,
        "result": transition.result,
        "finished_at": transition.finished_at,
        "attempt": 0 if transition.resets_attempts else job.attempt + transition.attempt_change,
    }
    if not transition.keeps_error:
        changes["error"] = transition.error
    if transition.run_at is not None:
        changes["run_at"] = transition.run_at
    if transition.resets_attempts:
        changes["cancel_requested"] = False
    if transition.lease is not None:
        changes |= {
            "lease_token": job.lease_token + 1,
            "lease_expires_at": transition.lease.expires_at,
            "worker_id": transition.lease.worker_id,
            "started_at": transition.at,
            "cancel_requested": False,
        }
    if transition.attempt_end is not None:
        changes |= {"lease_expires_at": None, "worker_id": None, "wait_reason": transition.wait}
        waiting = job.run_at if job.waiting_since is None else job.waiting_since
        changes["waiting_since"] = None if transition.wait is None else waiting
    return dataclasses.replace(job, **changes)  # type: ignore[arg-type]
