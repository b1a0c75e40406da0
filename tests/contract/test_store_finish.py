"""Contract: ending attempts with each kind of outcome, alone and in batches."""

from __future__ import annotations

import dataclasses

import pytest
from contract_support import BOOM, LEASE_MS, T0, WORKER, running, submit

from backroom.core import transitions
from backroom.core.job import Attempt, AttemptOutcome, ErrorInfo, JobEvent, JobState
from backroom.core.outcome import Cancelled, Failed, Outcome, Released, RetryAt, Succeeded
from backroom.store.protocol import Store

DONE_AT = T0 + 2_000
RETRY_AT = T0 + 9_000

# Each outcome, the job's new state, and its attempt row (but for the job id).
OUTCOMES: list[tuple[Outcome, JobState, Attempt]] = [
    (
        Succeeded({"summary": "short", "tokens": [1, 2]}),
        JobState.SUCCEEDED,
        Attempt(0, 1, WORKER, T0, DONE_AT, AttemptOutcome.SUCCEEDED, lease_token=1),
    ),
    (
        RetryAt(RETRY_AT, BOOM),
        JobState.QUEUED,
        Attempt(0, 1, WORKER, T0, DONE_AT, AttemptOutcome.RETRY, BOOM, RETRY_AT, lease_token=1),
    ),
    (
        Failed(BOOM),
        JobState.FAILED,
        Attempt(0, 1, WORKER, T0, DONE_AT, AttemptOutcome.FAILED, BOOM, lease_token=1),
    ),
    (
        Cancelled("stopped by user"),
        JobState.CANCELLED,
        Attempt(0, 1, WORKER, T0, DONE_AT, AttemptOutcome.CANCELLED, lease_token=1),
    ),
    (
        Released("worker shut down"),
        JobState.QUEUED,
        Attempt(
            0, 1, WORKER, T0, DONE_AT, AttemptOutcome.INTERRUPTED, None, DONE_AT, lease_token=1
        ),
    ),
]


@pytest.mark.parametrize(
    ("outcome", "state", "attempt"),
    OUTCOMES,
    ids=[type(outcome).__name__ for outcome, _, _ in OUTCOMES],
)
async def test_each_outcome_is_applied_as_the_core_describes(
    store: Store, outcome: Outcome, state: JobState, attempt: Attempt
) -> None:
    job = await running(store)

    assert await store.finish([(job.lease, outcome)], DONE_AT) == [True]

    stored = await store.get(job.id)
    assert stored == transitions.finish(job, outcome, DONE_AT)
    assert stored is not None and stored.state is state
    assert await store.attempts(job.id) == [dataclasses.replace(attempt, job_id=job.id)]
    last_event = (await store.events(job.id))[-1]
    assert (last_event.at, last_event.from_state, last_event.to_state) == (
        DONE_AT,
        JobState.RUNNING,
        state,
    )


async def test_a_release_does_not_use_up_an_attempt(store: Store) -> None:
    job = await running(store, max_attempts=1)
    await store.finish([(job.lease, Released())], DONE_AT)

    (again,) = await store.claim([], 1, WORKER, LEASE_MS, DONE_AT)

    assert again.attempt == 1
    assert [attempt.outcome for attempt in await store.attempts(job.id)] == [
        AttemptOutcome.INTERRUPTED,
        None,
    ]


async def test_a_retried_job_waits_until_its_retry_time(store: Store) -> None:
    job = await running(store)
    await store.finish([(job.lease, RetryAt(RETRY_AT, BOOM))], DONE_AT)

    assert await store.claim([], 1, WORKER, LEASE_MS, RETRY_AT - 1) == []
    (again,) = await store.claim([], 1, WORKER, LEASE_MS, RETRY_AT)
    assert (again.attempt, again.error) == (2, BOOM)


async def test_a_retry_with_no_attempts_left_fails_the_job(store: Store) -> None:
    job = await running(store, max_attempts=1)

    assert await store.finish([(job.lease, RetryAt(RETRY_AT, BOOM))], DONE_AT) == [True]

    stored = await store.get(job.id)
    assert stored == transitions.finish(job, Failed(BOOM), DONE_AT)


async def test_success_clears_the_error_of_an_earlier_attempt(store: Store) -> None:
    job = await running(store)
    await store.finish([(job.lease, RetryAt(DONE_AT, BOOM))], DONE_AT)
    (again,) = await store.claim([], 1, WORKER, LEASE_MS, DONE_AT)

    await store.finish([(again.lease, Succeeded(7))], DONE_AT + 1)

    stored = await store.get(job.id)
    assert stored is not None
    assert (stored.state, stored.result, stored.error) == (JobState.SUCCEEDED, 7, None)


async def test_a_batch_applies_each_outcome_whose_lease_is_held(store: Store) -> None:
    jobs = [await running(store) for _ in range(4)]
    await store.finish([(jobs[3].lease, Succeeded(None))], T0 + 1)
    crash = ErrorInfo("ValueError", "bad input")

    applied = await store.finish(
        [
            (jobs[0].lease, Succeeded("a")),
            (jobs[1].lease, Failed(crash)),
            (jobs[3].lease, Failed(crash)),
            (jobs[2].lease, RetryAt(RETRY_AT, BOOM)),
        ],
        DONE_AT,
    )

    assert applied == [True, True, False, True]
    states = [stored.state for stored in [await store.get(job.id) for job in jobs] if stored]
    assert states == [JobState.SUCCEEDED, JobState.FAILED, JobState.QUEUED, JobState.SUCCEEDED]


async def test_a_lease_named_twice_in_one_batch_applies_once(store: Store) -> None:
    job = await running(store)

    applied = await store.finish([(job.lease, Succeeded(1)), (job.lease, Failed(BOOM))], DONE_AT)

    assert applied == [True, False]
    stored = await store.get(job.id)
    assert stored is not None and stored.result == 1


async def test_finishing_a_queued_job_is_refused(store: Store) -> None:
    job = await submit(store)

    assert await store.finish([(job.lease, Succeeded(1))], DONE_AT) == [False]
    assert await store.get(job.id) == job


async def test_finishing_nothing_is_nothing(store: Store) -> None:
    assert await store.finish([], DONE_AT) == []


async def test_events_record_the_whole_life_of_a_job_with_times(store: Store) -> None:
    job = await running(store)
    await store.finish([(job.lease, RetryAt(T0 + 100, BOOM))], T0 + 50)
    (again,) = await store.claim([], 1, WORKER, LEASE_MS, T0 + 100)
    await store.finish([(again.lease, Succeeded("ok"))], T0 + 150)

    events = await store.events(job.id)

    assert [(event.at, event.from_state, event.to_state) for event in events] == [
        (T0, None, JobState.QUEUED),
        (T0, JobState.QUEUED, JobState.RUNNING),
        (T0 + 50, JobState.RUNNING, JobState.QUEUED),
        (T0 + 100, JobState.QUEUED, JobState.RUNNING),
        (T0 + 150, JobState.RUNNING, JobState.SUCCEEDED),
    ]
    assert events[2] == JobEvent(job.id, T0 + 50, JobState.RUNNING, JobState.QUEUED, str(BOOM))
    assert await store.events(job.id, after=3) == events[3:]
