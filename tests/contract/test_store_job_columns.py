"""Contract: `NewJobs` (jobs held as columns) store exactly what their `NewJob`s would,
and `submit_many` answers with `SubmittedJobs` whose results are built when read."""

from __future__ import annotations

import pytest
from contract_support import T0, new_job

from backroom.core import transitions
from backroom.core.errors import IdempotencyConflict, QueueFull
from backroom.core.idempotency import fingerprint
from backroom.core.job import JobEvent, JobState, NewJob
from backroom.core.job_batch import NewJobs
from backroom.store.protocol import Store

TEMPLATE = NewJob(
    task="summarize",
    input=None,
    run_at=T0 + 5,
    tenant="acme",
    queue="batch",
    priority=2,
    max_attempts=4,
    timeout_ms=1_500,
    metadata={"team": "ünï"},
    traceparent="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
)


def _columns(count: int, *, keyed: bool = False, template: NewJob = TEMPLATE) -> NewJobs:
    inputs = [{"n": n, "text": "☕"} if n % 2 else n for n in range(count)]
    if not keyed:
        return NewJobs(
            template, inputs, lanes=["openai/x" if n % 3 else None for n in range(count)]
        )
    keys = [f"k-{n}" for n in range(count)]
    prints = [fingerprint(template.task, value) for value in inputs]
    return NewJobs(template, inputs, keys, prints)


@pytest.mark.parametrize("count", [3, 120])
async def test_jobs_held_as_columns_are_stored_as_their_new_jobs(store: Store, count: int) -> None:
    jobs = _columns(count)

    submitted = await store.submit_many(jobs, T0)

    assert list(submitted.created) == [True] * count
    assert list(submitted.ids) == sorted(submitted.ids)
    for n in (0, 1, count - 1):
        job = submitted[n].job
        assert job.id == submitted.ids[n]
        assert job == transitions.new_job(job.id, jobs[n], T0)
        assert await store.get(job.id) == job
    assert submitted[-1] == submitted[count - 1]
    assert await store.events(submitted.ids[1]) == [
        JobEvent(submitted.ids[1], T0, None, JobState.QUEUED, "submitted")
    ]


@pytest.mark.parametrize("count", [3, 120])
async def test_keyed_columns_replay_and_conflict_as_single_jobs(store: Store, count: int) -> None:
    jobs = _columns(count, keyed=True)
    first = await store.submit_many(jobs, T0)

    again = await store.submit_many(jobs, T0 + 1)

    assert list(again.ids) == list(first.ids)
    assert not any(again.created)
    assert again[1].job == first[1].job
    single = await store.submit(jobs[count - 1], T0 + 2)
    assert (single.created, single.job.id) == (False, first.ids[-1])
    changed = NewJobs(TEMPLATE, [99], ["k-0"], [fingerprint(TEMPLATE.task, 99)])
    with pytest.raises(IdempotencyConflict):
        await store.submit_many(changed, T0 + 3)


async def test_a_key_repeated_within_columns_names_the_first_job(store: Store) -> None:
    inputs = [1, 2, 1]
    jobs = NewJobs(TEMPLATE, inputs, ["a", "b", "a"], [fingerprint("t", n) for n in inputs])

    submitted = await store.submit_many(jobs, T0)

    assert list(submitted.created) == [True, True, False]
    assert submitted.ids[2] == submitted.ids[0]
    assert submitted[2].job == submitted[0].job


async def test_columns_beyond_their_tenant_cap_store_nothing(store: Store) -> None:
    capped = NewJob(task="summarize", input=None, run_at=T0, tenant="capped", max_active=2)
    await store.submit(new_job(tenant="capped"), T0)

    with pytest.raises(QueueFull):
        await store.submit_many(_columns(2, template=capped), T0)

    assert await store.count_active("capped") == 1
    assert list((await store.submit_many(_columns(1, template=capped), T0)).created) == [True]


async def test_an_empty_submission_returns_no_results(store: Store) -> None:
    assert list(await store.submit_many(_columns(0), T0)) == []
    assert list(await store.submit_many([], T0)) == []
