"""Table tests for the job lifecycle in `backroom.core.transitions`."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest

from backroom.core import transitions
from backroom.core.errors import IllegalTransition
from backroom.core.job import ErrorInfo, Job, JobState, Lease, NewJob
from backroom.core.outcome import Cancelled, Failed, Outcome, Released, RetryAt, Succeeded

Q, R, S, F, C = (
    JobState.QUEUED,
    JobState.RUNNING,
    JobState.SUCCEEDED,
    JobState.FAILED,
    JobState.CANCELLED,
)

# Written out here rather than read from `transitions.ALLOWED`, so the table checks it.
EXPECTED_ALLOWED = {(Q, R), (R, S), (R, F), (R, C), (R, Q), (Q, C), (F, Q)}
ALL_PAIRS = list(itertools.product(JobState, JobState))

SUBMITTED_AT = 1_700_000_000_000
CLAIMED_AT = SUBMITTED_AT + 500
NOW = CLAIMED_AT + 1_000
LEASE_MS = 30_000
BOOM = ErrorInfo("RuntimeError", "boom")


def queued_job(max_attempts: int = 3, run_at: int = SUBMITTED_AT) -> Job:
    """A freshly submitted job."""
    new = NewJob(task="summarise", input={"doc": 7}, run_at=run_at, max_attempts=max_attempts)
    return transitions.new_job(41, new, SUBMITTED_AT)


def running_job(attempt: int = 1, max_attempts: int = 3) -> Job:
    """A job claimed by worker w1 at CLAIMED_AT, in its `attempt`-th attempt."""
    job = dataclasses.replace(queued_job(max_attempts), attempt=attempt - 1, lease_token=4)
    return transitions.claim(job, CLAIMED_AT, "w1", LEASE_MS)


def job_in(state: JobState) -> Job:
    """A plausible job in `state`."""
    running = running_job()
    by_state = {
        Q: queued_job(),
        R: running,
        S: transitions.finish(running, Succeeded("ok"), CLAIMED_AT),
        F: transitions.finish(running, Failed(BOOM), CLAIMED_AT),
        C: transitions.finish(running, Cancelled(), CLAIMED_AT),
    }
    return by_state[state]


def test_the_allowed_set_is_exactly_the_lifecycle() -> None:
    assert transitions.ALLOWED == EXPECTED_ALLOWED


@pytest.mark.parametrize(("source", "target"), ALL_PAIRS)
def test_check_allows_only_lifecycle_pairs(source: JobState, target: JobState) -> None:
    if (source, target) in EXPECTED_ALLOWED:
        transitions.check(source, target)
    else:
        with pytest.raises(IllegalTransition, match=f"from {source} to {target}"):
            transitions.check(source, target)


def test_new_job_is_queued_with_no_attempt_and_no_lease() -> None:
    new = NewJob(
        task="summarise",
        input={"doc": 7},
        run_at=SUBMITTED_AT + 10,
        tenant="acme",
        queue="batch",
        priority=5,
        max_attempts=4,
        timeout_ms=9_000,
        idempotency_key="k1",
        fingerprint="f" * 64,
        metadata={"source": "test"},
    )
    job = transitions.new_job(41, new, SUBMITTED_AT)
    assert job == Job(
        id=41,
        tenant="acme",
        task="summarise",
        queue="batch",
        priority=5,
        state=Q,
        input={"doc": 7},
        attempt=0,
        max_attempts=4,
        timeout_ms=9_000,
        run_at=SUBMITTED_AT + 10,
        created_at=SUBMITTED_AT,
        updated_at=SUBMITTED_AT,
        idempotency_key="k1",
        fingerprint="f" * 64,
        metadata={"source": "test"},
    )
    # The job gets its own copy: changing the request afterwards does not reach it.
    assert job.metadata is not new.metadata


def test_claim_starts_an_attempt_under_a_new_lease() -> None:
    job = dataclasses.replace(queued_job(), attempt=1, lease_token=4, cancel_requested=True)
    claimed = transitions.claim(job, CLAIMED_AT, "w1", LEASE_MS)
    assert claimed == dataclasses.replace(
        job,
        state=R,
        attempt=2,
        lease_token=5,
        lease_expires_at=CLAIMED_AT + LEASE_MS,
        worker_id="w1",
        started_at=CLAIMED_AT,
        updated_at=CLAIMED_AT,
        cancel_requested=False,
    )
    assert claimed.lease == Lease(41, 5, 2)


def test_claim_at_exactly_the_due_time_is_allowed() -> None:
    job = queued_job(run_at=CLAIMED_AT)
    assert transitions.claim(job, CLAIMED_AT, "w1", LEASE_MS).state is R


def test_claim_before_the_due_time_is_refused() -> None:
    job = queued_job(run_at=CLAIMED_AT + 1)
    with pytest.raises(IllegalTransition, match="not due"):
        transitions.claim(job, CLAIMED_AT, "w1", LEASE_MS)


@pytest.mark.parametrize("state", [R, S, F, C])
def test_claim_is_refused_unless_queued(state: JobState) -> None:
    with pytest.raises(IllegalTransition):
        transitions.claim(job_in(state), NOW, "w2", LEASE_MS)


def test_heartbeat_extends_the_lease_and_nothing_else() -> None:
    job = running_job()
    assert transitions.heartbeat(job, NOW, LEASE_MS) == dataclasses.replace(
        job, lease_expires_at=NOW + LEASE_MS, updated_at=NOW
    )


@pytest.mark.parametrize("state", [Q, S, F, C])
def test_heartbeat_is_refused_unless_running(state: JobState) -> None:
    with pytest.raises(IllegalTransition, match="not running"):
        transitions.heartbeat(job_in(state), NOW, LEASE_MS)


LEASE_CLEARED: dict[str, Any] = {"lease_expires_at": None, "worker_id": None, "updated_at": NOW}

FINISH_TABLE: list[tuple[Outcome, dict[str, Any]]] = [
    (
        Succeeded({"summary": "short"}),
        {"state": S, "result": {"summary": "short"}, "finished_at": NOW, "error": None},
    ),
    (RetryAt(NOW + 4_000, BOOM), {"state": Q, "run_at": NOW + 4_000, "error": BOOM}),
    (Failed(BOOM), {"state": F, "error": BOOM, "finished_at": NOW}),
    (Cancelled("user asked"), {"state": C, "finished_at": NOW}),
    # A release gives the attempt back: the next claim runs attempt 2 again.
    (Released(), {"state": Q, "run_at": NOW, "attempt": 1}),
]


@pytest.mark.parametrize(
    ("outcome", "changes"), FINISH_TABLE, ids=[type(o).__name__ for o, _ in FINISH_TABLE]
)
def test_finish_applies_each_outcome_field_by_field(
    outcome: Outcome, changes: dict[str, Any]
) -> None:
    job = running_job(attempt=2)
    finished = transitions.finish(job, outcome, NOW)
    assert finished == dataclasses.replace(job, **LEASE_CLEARED, **changes)
    # The fencing token never goes back, whatever the outcome.
    assert finished.lease_token == job.lease_token


def test_released_job_is_claimed_again_with_the_same_attempt_number() -> None:
    job = running_job(attempt=2)
    released = transitions.finish(job, Released(), NOW)
    reclaimed = transitions.claim(released, NOW, "w2", LEASE_MS)
    assert (reclaimed.attempt, reclaimed.lease_token) == (2, job.lease_token + 1)


def test_retry_with_no_attempts_left_is_refused() -> None:
    job = running_job(attempt=3, max_attempts=3)
    with pytest.raises(IllegalTransition, match="no attempts left"):
        transitions.finish(job, RetryAt(NOW + 1_000, BOOM), NOW)


def test_retry_on_the_second_to_last_attempt_is_allowed() -> None:
    job = running_job(attempt=2, max_attempts=3)
    assert transitions.finish(job, RetryAt(NOW + 1_000, BOOM), NOW).state is Q


@pytest.mark.parametrize("state", [Q, S, F, C])
@pytest.mark.parametrize(
    "outcome",
    [Succeeded(1), RetryAt(NOW, BOOM), Failed(BOOM), Cancelled(), Released()],
    ids=lambda outcome: type(outcome).__name__,
)
def test_finish_is_refused_unless_running(state: JobState, outcome: Outcome) -> None:
    with pytest.raises(IllegalTransition):
        transitions.finish(job_in(state), outcome, NOW)


def test_finish_refuses_an_unknown_outcome() -> None:
    with pytest.raises(IllegalTransition, match="unknown outcome"):
        transitions.finish(running_job(), "done", NOW)  # type: ignore[arg-type]  # on purpose


EXPIRED_AT = CLAIMED_AT + LEASE_MS


@pytest.mark.parametrize("now", [EXPIRED_AT, EXPIRED_AT + 60_000])
def test_expire_with_attempts_left_requeues_at_once(now: int) -> None:
    job = running_job(attempt=2, max_attempts=3)
    assert transitions.expire(job, now) == dataclasses.replace(
        job,
        state=Q,
        run_at=now,
        error=transitions.LEASE_EXPIRED,
        lease_expires_at=None,
        worker_id=None,
        updated_at=now,
    )


def test_expire_on_the_last_attempt_fails_the_job() -> None:
    job = running_job(attempt=3, max_attempts=3)
    assert transitions.expire(job, EXPIRED_AT) == dataclasses.replace(
        job,
        state=F,
        error=transitions.LEASE_EXPIRED,
        finished_at=EXPIRED_AT,
        lease_expires_at=None,
        worker_id=None,
        updated_at=EXPIRED_AT,
    )


def test_expire_is_refused_while_the_lease_still_runs() -> None:
    with pytest.raises(IllegalTransition, match="no expired lease"):
        transitions.expire(running_job(), EXPIRED_AT - 1)


def test_expire_is_refused_for_a_running_job_without_a_lease_expiry() -> None:
    job = dataclasses.replace(running_job(), lease_expires_at=None)
    with pytest.raises(IllegalTransition):
        transitions.expire(job, EXPIRED_AT)


@pytest.mark.parametrize("state", [Q, S, F, C])
def test_expire_is_refused_unless_running(state: JobState) -> None:
    with pytest.raises(IllegalTransition):
        transitions.expire(job_in(state), EXPIRED_AT + 1)


def test_cancel_of_a_queued_job_is_immediate() -> None:
    job = queued_job()
    assert transitions.cancel(job, NOW) == dataclasses.replace(
        job, state=C, finished_at=NOW, updated_at=NOW
    )


def test_cancel_of_a_running_job_only_asks_its_worker() -> None:
    job = running_job()
    assert transitions.cancel(job, NOW) == dataclasses.replace(
        job, cancel_requested=True, updated_at=NOW
    )


@pytest.mark.parametrize("state", [S, F, C])
def test_cancel_of_a_finished_job_is_refused(state: JobState) -> None:
    with pytest.raises(IllegalTransition):
        transitions.cancel(job_in(state), NOW)


def test_redrive_gives_a_failed_job_a_fresh_budget() -> None:
    failed = dataclasses.replace(job_in(F), cancel_requested=True)
    assert transitions.redrive(failed, NOW) == dataclasses.replace(
        failed,
        state=Q,
        attempt=0,
        run_at=NOW,
        finished_at=None,
        error=None,
        cancel_requested=False,
        updated_at=NOW,
    )


@pytest.mark.parametrize("state", [Q, R, S, C])
def test_redrive_is_refused_unless_failed(state: JobState) -> None:
    with pytest.raises(IllegalTransition):
        transitions.redrive(job_in(state), NOW)
