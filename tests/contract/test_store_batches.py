"""Contract: batch offload's provider batches and the offloaded jobs they hold.

An offloaded job stays running under its token with no lease expiry and no worker:
no heartbeat extends it and no lease sweep takes it back. A batch is an intent before
its provider id is stored; its jobs end through `batch_finish`, fenced and with their
calls settled; a job cancelled meanwhile drops out of its batch.
"""

from __future__ import annotations

from contract_support import LEASE_MS, T0, running

from backroom.core.job import ErrorInfo, Job, JobState, Lease
from backroom.core.outcome import Cancelled, RetryAt, Succeeded
from backroom.core.provider_batch import BatchCounts, BatchPhase, LineEnd
from backroom.core.spend import CallIntent
from backroom.core.usage import AttemptUsage
from backroom.store.protocol import Store

HOLD_MS = 60_000


async def offloaded(store: Store, count: int = 1) -> list[Job]:
    jobs = [await running(store) for _ in range(count)]
    for job in jobs:
        assert await store.offload(job.lease, "mock/gpt", T0 + 1)
    return jobs


def usage(job: Job) -> AttemptUsage:
    return AttemptUsage(
        job.id, job.attempt, job.tenant, "gpt", None, 10, 0, 5, 2_000, T0 + 9,
        lease_token=job.lease_token,
    )  # fmt: skip


async def test_an_offloaded_job_runs_with_no_expiry_no_worker_and_is_never_reaped(
    store: Store,
) -> None:
    (job,) = await offloaded(store)
    stored = await store.get(job.id)
    assert stored is not None
    assert (stored.state, stored.lease_token) == (JobState.RUNNING, job.lease_token)
    assert (stored.lease_expires_at, stored.worker_id) == (None, None)
    beat = await store.heartbeat([job.lease], LEASE_MS, T0 + 2)
    assert beat.lost == frozenset()
    assert await store.expire_leases(T0 + 100 * LEASE_MS) == []
    assert (await store.get(job.id)).lease_expires_at is None  # type: ignore[union-attr]


async def test_offloading_a_lease_not_held_changes_nothing(store: Store) -> None:
    job = await running(store)
    await store.finish([(job.lease, Succeeded(1))], T0 + 1)
    assert not await store.offload(job.lease, "mock/gpt", T0 + 2)
    assert await store.stray_jobs(T0 + 10, 10) == []


async def test_an_intent_holds_the_waiting_lines_named_once(store: Store) -> None:
    jobs = await offloaded(store, 3)
    leases = [job.lease for job in jobs]
    batch, kept = await store.batch_create("b-1", "mock", "mock/gpt", leases[:2], T0 + 5, HOLD_MS)
    assert kept == leases[:2]
    assert (batch.phase, batch.counts.total, batch.due_at) == (
        BatchPhase.INTENT,
        2,
        T0 + 5 + HOLD_MS,
    )
    again, none = await store.batch_create("b-2", "mock", "mock/gpt", leases, T0 + 6, HOLD_MS)
    assert none == [leases[2]]  # the first two are in b-1 already
    assert [job.id for job in await store.batch_line_jobs(batch.id)] == [jobs[0].id, jobs[1].id]
    assert (await store.job_batch(jobs[2].id)).id == again.id  # type: ignore[union-attr]


async def test_a_submitted_batch_is_open_polled_and_taken_by_one_poller(store: Store) -> None:
    jobs = await offloaded(store, 2)
    batch, _ = await store.batch_create("b", "mock", "m", [j.lease for j in jobs], T0, HOLD_MS)
    assert await store.batches_due(T0 + 1, HOLD_MS, 10) == []  # its submitter holds it
    await store.batch_submitted(batch.id, "batch_9", T0 + 2)
    (due,) = await store.batches_due(T0 + 2, 500, 10)
    assert (due.phase, due.provider_batch_id, due.due_at) == (BatchPhase.OPEN, "batch_9", T0 + 502)
    assert await store.batches_due(T0 + 3, 500, 10) == []  # taken
    await store.batch_polled(batch.id, "in_progress", BatchCounts(2, 1, 0), T0 + 900, T0 + 4)
    (shown,) = await store.provider_batches()
    assert (shown.provider_status, shown.counts, shown.polls) == (
        "in_progress",
        BatchCounts(2, 1, 0),
        1,
    )
    assert shown.document()["counts"] == {"total": 2, "succeeded": 1, "failed": 0, "pending": 1}


async def test_an_intent_whose_hold_ran_out_is_due_for_recovery(store: Store) -> None:
    (job,) = await offloaded(store)
    batch, _ = await store.batch_create("b", "mock", "m", [job.lease], T0, HOLD_MS)
    (due,) = await store.batches_due(T0 + HOLD_MS, HOLD_MS, 10)
    assert (due.id, due.phase) == (batch.id, BatchPhase.INTENT)


async def test_batch_finish_settles_calls_and_ends_each_job_once(store: Store) -> None:
    jobs = await offloaded(store, 3)
    for job in jobs:
        lease = job.lease
        intent = CallIntent(
            job.id, lease.token, lease.attempt, job.tenant, "mock", "gpt", 9_000, T0
        )
        await store.call_open(lease, intent, None)
    retry = RetryAt(T0 + 50, ErrorInfo("Retryable", "HTTP 503"))
    ends = [
        LineEnd(jobs[0].lease, Succeeded({"ok": 1}), usage(jobs[0])),
        LineEnd(jobs[1].lease, retry),
        LineEnd(jobs[2].lease, Cancelled("cancelled"), settles=False),
    ]
    assert await store.batch_finish(ends, T0 + 10) == [True, True, True]
    assert await store.batch_finish(ends, T0 + 11) == [False, False, False]  # fenced
    states = [(await store.get(job.id)).state for job in jobs]  # type: ignore[union-attr]
    assert states == [JobState.SUCCEEDED, JobState.QUEUED, JobState.CANCELLED]
    assert (await store.usage_totals(jobs[0].id)).cost_pico_usd == 2_000
    assert (await store.usage_totals(jobs[1].id)).cost_pico_usd == 0
    assert await store.open_calls(jobs[0].id) == []
    assert await store.open_calls(jobs[1].id) == []
    assert len(await store.open_calls(jobs[2].id)) == 1  # its line may still be billed
    # Its line came back billed: the call settles once, the cancelled job stays as it is.
    billed = LineEnd(jobs[2].lease, None, usage(jobs[2]))
    assert await store.batch_finish([billed], T0 + 12) == [False]
    assert await store.batch_finish([billed], T0 + 13) == [False]
    assert await store.open_calls(jobs[2].id) == []
    assert (await store.usage_totals(jobs[2].id)).cost_pico_usd == 2_000
    assert (await store.get(jobs[2].id)).state is JobState.CANCELLED  # type: ignore[union-attr]


async def test_closing_a_batch_drops_its_lines_and_hides_it(store: Store) -> None:
    (job,) = await offloaded(store)
    batch, _ = await store.batch_create("b", "mock", "m", [job.lease], T0, HOLD_MS)
    assert [(found.line_token, found.id) for found in await store.batch_line_jobs(batch.id)] == [
        (job.lease_token, job.id)
    ]
    await store.batch_close(batch.id, "completed", T0 + 1)
    assert await store.batch_line_jobs(batch.id) == []
    assert await store.provider_batches() == []
    assert await store.batch_cancels(batch.id) == ([], False)
    assert await store.job_batch(job.id) is None


async def test_stray_lines_of_running_jobs_are_found_and_dead_ones_dropped(store: Store) -> None:
    jobs = await offloaded(store, 2)
    await store.batch_finish([LineEnd(jobs[1].lease, Succeeded(1))], T0 + 2)
    assert await store.stray_jobs(T0 + 1, 10) == []  # handed at T0 + 1: not before
    assert [job.id for job in await store.stray_jobs(T0 + 5, 10)] == [jobs[0].id]
    cancelled = await store.cancel(jobs[0].id, T0 + 6)
    assert cancelled is not None and cancelled.cancel_requested
    (stray,) = await store.stray_jobs(T0 + 7, 10)
    assert stray.cancel_requested


async def test_a_line_job_holds_what_its_write_back_reads_in_whatever_state(
    store: Store,
) -> None:
    jobs = await offloaded(store, 2)
    batch, _ = await store.batch_create("b", "mock", "m", [j.lease for j in jobs], T0, HOLD_MS)
    await store.batch_finish([LineEnd(jobs[1].lease, Succeeded(1))], T0 + 2)
    first, second = await store.batch_line_jobs(batch.id)
    job = jobs[0]
    assert (first.id, first.line_token, first.lease, first.state) == (
        job.id, job.lease_token, job.lease, JobState.RUNNING,
    )  # fmt: skip
    assert (first.tenant, first.lane, first.metadata, first.input) == (
        job.tenant, job.lane, job.metadata, job.input,
    )  # fmt: skip
    assert (first.waiting, first.attempts_left) == (True, job.attempts_left)
    assert (second.id, second.state, second.waiting) == (jobs[1].id, JobState.SUCCEEDED, False)


async def cancels(store: Store, batch_id: int) -> tuple[list[Lease], bool]:
    asked, others = await store.batch_cancels(batch_id)
    return sorted(asked, key=lambda lease: lease.job_id), others


async def test_a_batchs_cancels_are_its_live_jobs_asked_to_stop(store: Store) -> None:
    jobs = await offloaded(store, 3)
    batch, _ = await store.batch_create("b", "mock", "m", [j.lease for j in jobs], T0, HOLD_MS)
    assert await cancels(store, batch.id) == ([], True)
    await store.cancel(jobs[2].id, T0 + 2)
    assert await cancels(store, batch.id) == ([jobs[2].lease], True)
    await store.batch_finish([LineEnd(jobs[0].lease, Succeeded(1))], T0 + 3)  # no longer live
    await store.cancel(jobs[1].id, T0 + 4)
    assert await cancels(store, batch.id) == ([jobs[1].lease, jobs[2].lease], False)
    cancelled = [LineEnd(jobs[2].lease, Cancelled("cancelled"), settles=False)]
    await store.batch_finish(cancelled, T0 + 5)
    assert await cancels(store, batch.id) == ([jobs[1].lease], False)
