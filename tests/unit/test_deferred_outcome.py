"""`Deferred`: a job that could not start goes back to the queue without using an attempt."""

from __future__ import annotations

import dataclasses

from backroom.core import transitions
from backroom.core.job import AttemptOutcome, ErrorInfo, Job, JobState, NewJob
from backroom.core.lifecycle import Reason, RunningFacts
from backroom.core.outcome import Deferred

T0 = 1_700_000_000_000
LATER = T0 + 5_000
LIMITED = ErrorInfo("RateLimited", "RateLimitError (HTTP 429): slow down")


def running(attempt: int = 1, max_attempts: int = 3) -> Job:
    new = NewJob(task="llm.respond", input={}, run_at=T0, max_attempts=max_attempts, lane="x/y")
    queued = dataclasses.replace(transitions.new_job(7, new, T0), attempt=attempt - 1)
    return transitions.claim(queued, T0, "w1", 30_000)


def test_a_new_job_keeps_its_lane() -> None:
    assert running().lane == "x/y"


def test_a_deferred_job_is_queued_at_its_time_with_the_attempt_given_back() -> None:
    job = transitions.finish(running(attempt=3, max_attempts=3), Deferred(LATER), T0 + 10)

    assert job.state is JobState.QUEUED
    assert (job.run_at, job.attempt, job.attempts_left) == (LATER, 2, 1)
    assert (job.lease_expires_at, job.worker_id, job.error) == (None, None, None)


def test_a_deferred_job_whose_cancel_was_asked_is_cancelled() -> None:
    flagged = transitions.cancel(running(), T0 + 1)

    assert transitions.finish(flagged, Deferred(LATER), T0 + 2).state is JobState.CANCELLED


def test_the_store_write_refunds_the_attempt_and_marks_its_row() -> None:
    write = transitions.finished(
        Deferred(LATER, "lane x/y is busy", LIMITED),
        T0,
        RunningFacts(spent=True, cancel_requested=False),
    )

    assert write.target is JobState.QUEUED
    assert (write.run_at, write.attempt_change, write.keeps_error) == (LATER, -1, True)
    assert write.attempt_end is not None
    assert write.attempt_end.outcome is AttemptOutcome.DEFERRED
    assert (write.attempt_end.error, write.attempt_end.next_attempt_at, write.reason) == (
        LIMITED,
        LATER,
        "lane x/y is busy",
    )


def test_the_store_write_of_a_cancelled_deferral_cancels() -> None:
    write = transitions.finished(
        Deferred(LATER, error=LIMITED), T0, RunningFacts(spent=False, cancel_requested=True)
    )

    assert write.target is JobState.CANCELLED
    assert write.attempt_end is not None
    assert (write.attempt_end.outcome, write.attempt_end.error) == (
        AttemptOutcome.DEFERRED,
        LIMITED,
    )
    assert (write.reason, write.finished_at) == (Reason.CANCELLED, T0)
