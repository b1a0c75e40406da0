"""Table tests for the job lifecycle in `backroom.core.transitions`: lease expiry,
cancel and redrive."""

from __future__ import annotations

import dataclasses

import pytest
from transition_jobs import (
    CLAIMED_AT,
    LEASE_MS,
    NOW,
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
from backroom.core.job import JobState

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
