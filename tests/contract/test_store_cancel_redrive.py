"""Contract: cancelling jobs, and redriving failed ones from the dead-letter list."""

from __future__ import annotations

from typing import Any

import pytest
from contract_support import BOOM, LEASE_MS, T0, WORKER, running, submit

from backroom.core import transitions
from backroom.core.job import Job, JobEvent, JobState
from backroom.core.outcome import Cancelled, Failed, Outcome, Released, RetryAt, Succeeded
from backroom.store.protocol import RedriveFilter, Store

LATER = T0 + 5_000


async def failed(store: Store, **fields: Any) -> Job:
    """A job that failed for good on its first attempt."""
    job = await running(store, **fields)
    await store.finish([(job.lease, Failed(BOOM))], T0 + 1)
    stored = await store.get(job.id)
    assert stored is not None
    return stored


async def test_cancelling_a_queued_job_cancels_it_at_once(store: Store) -> None:
    job = await submit(store)

    cancelled = await store.cancel(job.id, LATER)

    assert cancelled == transitions.cancel(job, LATER)
    assert await store.get(job.id) == cancelled
    assert (await store.events(job.id))[-1] == JobEvent(
        job.id, LATER, JobState.QUEUED, JobState.CANCELLED, "cancelled"
    )
    assert await store.claim([], 1, WORKER, LEASE_MS, LATER) == []


async def test_cancelling_a_running_job_asks_its_worker_to_stop(store: Store) -> None:
    job = await running(store)

    flagged = await store.cancel(job.id, LATER)

    assert flagged == transitions.cancel(job, LATER)
    assert flagged is not None and flagged.state is JobState.RUNNING
    assert flagged.cancel_requested
    assert await store.finish([(job.lease, Cancelled())], LATER + 1) == [True]
    stored = await store.get(job.id)
    assert stored is not None and stored.state is JobState.CANCELLED


async def test_cancelling_a_finished_job_changes_nothing(store: Store) -> None:
    job = await running(store)
    await store.finish([(job.lease, Succeeded(1))], T0 + 1)
    finished = await store.get(job.id)

    assert await store.cancel(job.id, LATER) == finished
    assert await store.get(job.id) == finished


async def test_another_tenants_job_cannot_be_cancelled(store: Store) -> None:
    job = await submit(store, tenant="acme")

    assert await store.cancel(job.id, LATER, tenant="globex") is None
    assert await store.get(job.id) == job
    assert await store.cancel(job.id + 1_000, LATER) is None


async def test_a_redriven_job_is_queued_with_a_fresh_attempt_budget(store: Store) -> None:
    dead = await failed(store, max_attempts=1)

    (redriven,) = await store.redrive(RedriveFilter(job_ids=[dead.id]), LATER)

    assert redriven == transitions.redrive(dead, LATER)
    assert (redriven.attempt, redriven.attempts_left, redriven.error) == (0, 1, None)
    assert (await store.events(dead.id))[-1] == JobEvent(
        dead.id, LATER, JobState.FAILED, JobState.QUEUED, "redrive"
    )
    (again,) = await store.claim([], 1, WORKER, LEASE_MS, LATER)
    assert again.id == dead.id


async def test_redrive_takes_only_failed_jobs_matching_the_filter(store: Store) -> None:
    summarize = await failed(store, task="summarize", tenant="acme")
    translate = await failed(store, task="translate", tenant="acme", queue="batch")
    other_tenant = await failed(store, task="summarize", tenant="globex")
    await submit(store, task="summarize", tenant="acme")

    by_task = await store.redrive(RedriveFilter(tenant="acme", task="summarize"), LATER)
    by_queue = await store.redrive(RedriveFilter(queue="batch"), LATER)
    the_rest = await store.redrive(RedriveFilter(), LATER)

    assert [job.id for job in by_task] == [summarize.id]
    assert [job.id for job in by_queue] == [translate.id]
    assert [job.id for job in the_rest] == [other_tenant.id]
    assert await store.redrive(RedriveFilter(), LATER) == []


@pytest.mark.parametrize(
    "outcome", [RetryAt(T0 + 5_000, BOOM), Released()], ids=["retry", "release"]
)
async def test_a_cancel_asked_while_running_is_not_lost_to_a_retry(
    store: Store, outcome: Outcome
) -> None:
    job = await running(store)
    await store.cancel(job.id, T0 + 1)

    assert await store.finish([(job.lease, outcome)], T0 + 2) == [True]

    stored = await store.get(job.id)
    assert stored is not None and stored.state is JobState.CANCELLED


async def test_a_cancel_asked_while_running_is_not_lost_to_an_expired_lease(store: Store) -> None:
    job = await running(store)
    await store.cancel(job.id, T0 + 1)

    (expired,) = await store.expire_leases(T0 + LEASE_MS)

    assert expired.state is JobState.CANCELLED
    assert await store.claim([], 1, WORKER, LEASE_MS, T0 + LEASE_MS) == []
