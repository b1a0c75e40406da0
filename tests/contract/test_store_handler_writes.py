"""Contract: what a running handler stores through its lease: progress and `once`."""

from __future__ import annotations

from contract_support import T0, running

from backroom.core.job import ErrorInfo
from backroom.core.outcome import Failed, Succeeded
from backroom.store.protocol import OnceRecord, RedriveFilter, Store


async def test_progress_and_partial_output_are_stored_on_the_job(store: Store) -> None:
    job = await running(store)

    assert await store.set_progress(job.lease, 0.25, {"text": "Once upon"}, T0 + 1)
    assert await store.set_progress(job.lease, 0.5, None, T0 + 2)

    stored = await store.get(job.id)
    assert stored is not None
    assert (stored.progress, stored.partial, stored.updated_at) == (
        0.5,
        {"text": "Once upon"},
        T0 + 2,
    )


async def test_progress_stays_on_a_finished_job_but_cannot_change(store: Store) -> None:
    job = await running(store)
    await store.set_progress(job.lease, 0.9, "almost", T0 + 1)
    await store.finish([(job.lease, Succeeded("done"))], T0 + 2)

    assert not await store.set_progress(job.lease, 1.0, "late", T0 + 3)
    stored = await store.get(job.id)
    assert stored is not None and (stored.progress, stored.partial) == (0.9, "almost")


async def test_the_first_once_begin_claims_the_effect(store: Store) -> None:
    job = await running(store)

    assert await store.once_begin(job.lease, "email", T0) is None
    assert await store.once_begin(job.lease, "email", T0) == OnceRecord(done=False)
    assert await store.once_begin(job.lease, "invoice", T0) is None


async def test_a_finished_once_returns_its_result_to_later_calls(store: Store) -> None:
    job = await running(store)
    await store.once_begin(job.lease, "email", T0)

    await store.once_end(job.lease, "email", {"message_id": "m-1"}, T0 + 1)

    assert await store.once_begin(job.lease, "email", T0 + 2) == OnceRecord(
        done=True, result={"message_id": "m-1"}
    )


async def test_an_aborted_once_may_run_again(store: Store) -> None:
    job = await running(store)
    await store.once_begin(job.lease, "email", T0)

    await store.once_abort(job.lease, "email")

    assert await store.once_begin(job.lease, "email", T0 + 1) is None


async def test_once_records_are_kept_per_job(store: Store) -> None:
    first = await running(store)
    second = await running(store)
    await store.once_begin(first.lease, "email", T0)
    await store.once_end(first.lease, "email", 1, T0)

    assert await store.once_begin(second.lease, "email", T0) is None


async def test_a_redrive_forgets_unfinished_once_entries_and_keeps_finished_ones(
    store: Store,
) -> None:
    job = await running(store, max_attempts=1)
    await store.once_begin(job.lease, "charge", T0)
    await store.once_begin(job.lease, "receipt", T0)
    await store.once_end(job.lease, "receipt", "r-1", T0)
    await store.finish([(job.lease, Failed(ErrorInfo("OnceUncertain", "check")))], T0 + 1)

    await store.redrive(RedriveFilter(job_ids=[job.id]), T0 + 2)
    (again,) = await store.claim([], 1, "worker-2", 30_000, T0 + 2)

    assert await store.once_begin(again.lease, "charge", T0 + 3) is None
    assert await store.once_begin(again.lease, "receipt", T0 + 3) == OnceRecord(True, "r-1")
