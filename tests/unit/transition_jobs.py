"""Jobs at each point of the lifecycle, for the table tests of `backroom.core.transitions`."""

from __future__ import annotations

import dataclasses

from backroom.core import transitions
from backroom.core.job import ErrorInfo, Job, JobState, NewJob
from backroom.core.outcome import Cancelled, Failed, Succeeded

Q, R, S, F, C = (
    JobState.QUEUED,
    JobState.RUNNING,
    JobState.SUCCEEDED,
    JobState.FAILED,
    JobState.CANCELLED,
)

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
