"""Contract: heartbeats, fencing tokens, and the sweep of expired leases."""

from __future__ import annotations

import dataclasses

import pytest
from contract_support import LEASE_MS, T0, WORKER, Backend, running, submit

from backroom.core import transitions
from backroom.core.errors import LeaseLost
from backroom.core.job import Attempt, AttemptOutcome, JobEvent, JobState, Lease
from backroom.core.outcome import Succeeded
from backroom.store.protocol import HeartbeatResult, RedriveFilter, Store

EXPIRED_AT = T0 + LEASE_MS


async def test_a_heartbeat_extends_the_lease(store: Store) -> None:
    job = await running(store)

    result = await store.heartbeat([job.lease], LEASE_MS, T0 + 10_000)

    assert result == HeartbeatResult()
    assert await store.get(job.id) == transitions.heartbeat(job, T0 + 10_000, LEASE_MS)


async def test_a_heartbeat_reports_lost_leases_and_cancel_requests(store: Store) -> None:
    kept = await running(store)
    cancelled = await running(store)
    finished = await running(store)
    await store.cancel(cancelled.id, T0 + 1)
    await store.finish([(finished.lease, Succeeded(None))], T0 + 1)
    stale = dataclasses.replace(kept.lease, job_id=finished.id)

    result = await store.heartbeat(
        [kept.lease, cancelled.lease, finished.lease, stale], LEASE_MS, T0 + 2
    )

    assert result == HeartbeatResult(
        lost=frozenset({finished.id}), cancel_requested=frozenset({cancelled.id})
    )


async def test_an_expired_lease_sends_the_job_back_to_the_queue(store: Store) -> None:
    job = await running(store, max_attempts=2)

    (expired,) = await store.expire_leases(EXPIRED_AT)

    assert expired == transitions.expire(job, EXPIRED_AT)
    assert expired.state is JobState.QUEUED
    assert expired.error == transitions.LEASE_EXPIRED
    assert await store.get(job.id) == expired
    assert await store.attempts(job.id) == [
        Attempt(
            job.id,
            1,
            WORKER,
            started_at=T0,
            finished_at=EXPIRED_AT,
            outcome=AttemptOutcome.LEASE_EXPIRED,
            error=transitions.LEASE_EXPIRED,
            next_attempt_at=EXPIRED_AT,
            lease_token=1,
        )
    ]
    assert (await store.events(job.id))[-1] == JobEvent(
        job.id, EXPIRED_AT, JobState.RUNNING, JobState.QUEUED, str(transitions.LEASE_EXPIRED)
    )


async def test_an_expired_lease_on_the_last_attempt_fails_the_job(store: Store) -> None:
    job = await running(store, max_attempts=1)

    (expired,) = await store.expire_leases(EXPIRED_AT)

    assert expired == transitions.expire(job, EXPIRED_AT)
    assert expired.state is JobState.FAILED
    (attempt,) = await store.attempts(job.id)
    assert attempt.outcome is AttemptOutcome.LEASE_EXPIRED
    assert attempt.next_attempt_at is None


async def test_leases_not_yet_expired_are_left_alone(store: Store) -> None:
    await running(store)
    await submit(store)

    assert await store.expire_leases(EXPIRED_AT - 1) == []


async def test_the_sweep_takes_at_most_its_limit(store: Store) -> None:
    for _ in range(3):
        await submit(store)
    await store.claim([], 3, WORKER, LEASE_MS, T0)

    first = await store.expire_leases(EXPIRED_AT, limit=2)
    rest = await store.expire_leases(EXPIRED_AT, limit=2)

    assert (len(first), len(rest)) == (2, 1)


async def test_a_reclaimed_job_refuses_every_write_under_the_old_lease(store: Store) -> None:
    job = await running(store)
    await store.expire_leases(EXPIRED_AT)
    (reclaimed,) = await store.claim([], 1, "worker-2", LEASE_MS, EXPIRED_AT)
    old = job.lease

    assert reclaimed.lease == Lease(job.id, token=2, attempt=2)
    assert await store.finish([(old, Succeeded("stale"))], EXPIRED_AT) == [False]
    assert (await store.heartbeat([old], LEASE_MS, EXPIRED_AT)).lost == {job.id}
    assert not await store.set_progress(old, 0.5, None, EXPIRED_AT)
    with pytest.raises(LeaseLost):
        await store.once_begin(old, "email", EXPIRED_AT)
    with pytest.raises(LeaseLost):
        await store.once_end(old, "email", None, EXPIRED_AT)
    with pytest.raises(LeaseLost):
        await store.once_abort(old, "email")
    assert await store.get(job.id) == reclaimed


async def test_the_fencing_token_survives_a_redrive(store: Store) -> None:
    job = await running(store, max_attempts=1)
    await store.expire_leases(EXPIRED_AT)
    await store.redrive(RedriveFilter(job_ids=[job.id]), EXPIRED_AT)

    (again,) = await store.claim([], 1, WORKER, LEASE_MS, EXPIRED_AT)

    assert again.lease == Lease(job.id, token=2, attempt=1)


async def test_a_commit_watch_reports_another_stores_commits_once(backend: Backend) -> None:
    # Stores that hear every process's new work through `on_new_work` have no watch.
    watching, submitting = await backend.open(), await backend.open()
    changed = watching.commit_watch()
    if changed is None:
        return
    changed()  # the first look only learns where the file is

    quiet = changed()
    await submit(submitting)
    after_submit = changed()
    again = changed()
    await watching.claim([], 10, WORKER, LEASE_MS, T0)  # its own claim of that job: a commit too
    after_own_claim = changed()
    # Idle workers claiming nothing change nothing: they do not wake each other.
    await submitting.claim([], 10, WORKER, LEASE_MS, T0)
    after_empty_claim = changed()

    assert (quiet, after_submit, again, after_own_claim, after_empty_claim) == (
        False,
        True,
        False,
        True,
        False,
    )
