"""Table tests for the job lifecycle in `backroom.core.transitions`: the allowed pairs,
submission, claim, heartbeat and finish."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest
from transition_jobs import (
    BOOM,
    CLAIMED_AT,
    LEASE_MS,
    NOW,
    SUBMITTED_AT,
    C,
    F,
    Q,
    R,
    S,
    job_in,
    queued_job,
    running_job,
)

from backroom.core import transitions
from backroom.core.errors import IllegalTransition
from backroom.core.job import Job, JobState, Lease, NewJob
from backroom.core.outcome import Cancelled, Failed, Outcome, Released, RetryAt, Succeeded

# Written out here rather than read from `transitions.ALLOWED`, so the table checks it.
EXPECTED_ALLOWED = {(Q, R), (R, S), (R, F), (R, C), (R, Q), (Q, C), (F, Q)}
ALL_PAIRS = list(itertools.product(JobState, JobState))


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
