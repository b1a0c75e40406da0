"""Contract: submitting jobs, idempotency keys, and reading jobs back."""

from __future__ import annotations

import asyncio

import pytest
from contract_support import T0, Backend, new_job, running, submit

from backroom.core import transitions
from backroom.core.errors import IdempotencyConflict, QueueFull
from backroom.core.job import JobEvent, JobState, SubmitResult
from backroom.core.outcome import Succeeded
from backroom.store.protocol import Store


async def test_a_submitted_job_is_queued_as_the_core_describes(store: Store) -> None:
    new = new_job(
        "translate",
        {"text": "hallo", "to": ["en", "fr"]},
        run_at=T0 + 5_000,
        tenant="acme",
        queue="batch",
        priority=3,
        max_attempts=5,
        timeout_ms=60_000,
        key="k1",
        metadata={"source": "api"},
    )

    result = await store.submit(new, T0)

    assert result.created
    assert result.job == transitions.new_job(result.job.id, new, T0)
    assert await store.get(result.job.id) == result.job


async def test_submitting_records_the_transition_to_queued(store: Store) -> None:
    job = await submit(store, T0 + 7)

    assert await store.events(job.id) == [
        JobEvent(job.id, T0 + 7, None, JobState.QUEUED, "submitted")
    ]


async def test_a_repeated_key_with_the_same_payload_returns_the_first_job(store: Store) -> None:
    first = await store.submit(new_job(key="k1"), T0)

    again = await store.submit(new_job(key="k1"), T0 + 1_000)

    assert not again.created
    assert again.job == first.job
    assert len(await store.events(first.job.id)) == 1


async def test_a_repeated_key_with_another_payload_is_a_conflict(store: Store) -> None:
    first = await store.submit(new_job(payload={"doc": 1}, key="k1"), T0)

    with pytest.raises(IdempotencyConflict) as raised:
        await store.submit(new_job(payload={"doc": 2}, key="k1"), T0)

    assert raised.value.job_id == first.job.id
    assert raised.value.key == "k1"


async def test_keys_are_scoped_to_the_tenant(store: Store) -> None:
    acme = await store.submit(new_job(payload={"doc": 1}, key="k1", tenant="acme"), T0)
    globex = await store.submit(new_job(payload={"doc": 2}, key="k1", tenant="globex"), T0)

    assert acme.created and globex.created
    assert acme.job.id != globex.job.id


async def test_jobs_without_a_key_are_never_merged(store: Store) -> None:
    first = await submit(store)
    second = await submit(store)

    assert first.id != second.id


async def test_a_hundred_concurrent_submitters_of_one_key_get_one_job(backend: Backend) -> None:
    stores = [await backend.open() for _ in range(4)]

    results = await asyncio.gather(
        *(stores[n % 4].submit(new_job(key="once"), T0 + n) for n in range(120))
    )

    assert sum(result.created for result in results) == 1
    assert len({result.job.id for result in results}) == 1


async def test_concurrent_submitters_each_get_their_own_answer(store: Store) -> None:
    # Submissions made at once may be stored together (group commit): a refused one
    # must fail alone, and a key repeated among them still names one job.
    await store.submit(new_job(payload={"doc": 1}, key="taken"), T0)
    submissions = [new_job(payload={"doc": n % 10}, key=f"k{n % 10}") for n in range(20)]
    submissions += [new_job(payload={"doc": 2}, key="taken"), new_job()]

    results = await asyncio.gather(
        *(store.submit(new, T0 + 1) for new in submissions), return_exceptions=True
    )

    assert isinstance(results[20], IdempotencyConflict)
    stored = [result for result in results if not isinstance(result, BaseException)]
    assert len(stored) == 21
    assert sum(result.created for result in stored) == 11
    by_key = {result.job.idempotency_key: result.job.id for result in stored}
    assert all(by_key[result.job.idempotency_key] == result.job.id for result in stored)


async def test_concurrent_capped_submitters_fill_the_cap_exactly(store: Store) -> None:
    results = await asyncio.gather(
        *(store.submit(new_job(tenant="capped", max_active=3), T0) for _ in range(12)),
        return_exceptions=True,
    )

    assert sum(not isinstance(result, BaseException) for result in results) == 3
    assert all(isinstance(result, QueueFull | SubmitResult) for result in results)
    assert await store.count_active("capped") == 3


async def test_submit_many_stores_every_job_in_order(store: Store) -> None:
    batch = [new_job(payload={"doc": n}, priority=n % 3) for n in range(50)]

    results = await store.submit_many(batch, T0)

    assert all(result.created for result in results)
    assert [result.job.input for result in results] == [{"doc": n} for n in range(50)]
    assert len({result.job.id for result in results}) == 50
    for result in results:
        assert await store.get(result.job.id) == result.job


async def test_submit_many_resolves_keys_against_stored_jobs_and_each_other(
    store: Store,
) -> None:
    stored = await store.submit(new_job(key="old"), T0)

    results = await store.submit_many(
        [new_job(key="old"), new_job(key="new"), new_job(), new_job(key="new")], T0 + 1
    )

    assert [result.created for result in results] == [False, True, True, False]
    assert results[0].job == stored.job
    assert results[3].job == results[1].job


async def test_a_conflict_in_submit_many_stores_nothing(store: Store) -> None:
    await store.submit(new_job(payload={"doc": 1}, key="k1"), T0)

    with pytest.raises(IdempotencyConflict):
        await store.submit_many([new_job(key="fresh"), new_job(payload={"doc": 2}, key="k1")], T0)

    fresh = await store.submit(new_job(key="fresh"), T0)
    assert fresh.created


async def test_submit_many_of_nothing_is_nothing(store: Store) -> None:
    assert await store.submit_many([], T0) == []


async def test_get_hides_another_tenants_job(store: Store) -> None:
    job = await submit(store, tenant="acme")

    assert await store.get(job.id, tenant="acme") == job
    assert await store.get(job.id, tenant="globex") is None
    assert await store.get(job.id + 1_000) is None


async def test_a_tenant_at_its_cap_is_refused_and_nothing_is_stored(store: Store) -> None:
    await submit(store, tenant="capped", max_active=2)
    await submit(store, tenant="capped", max_active=2)

    with pytest.raises(QueueFull):
        await store.submit(new_job(tenant="capped", key="third", max_active=2), T0)

    assert await store.count_active("capped") == 2
    await submit(store, tenant="other", max_active=2)  # the cap is per tenant


async def test_a_replay_is_answered_even_at_the_cap(store: Store) -> None:
    first = await submit(store, tenant="capped", key="k", max_active=1)

    replay = await store.submit(new_job(tenant="capped", key="k", max_active=1), T0)

    assert (replay.job.id, replay.created) == (first.id, False)


async def test_finished_jobs_do_not_count_against_the_cap(store: Store) -> None:
    job = await running(store, tenant="capped", max_active=1)
    await store.finish([(job.lease, Succeeded(None))], T0 + 1)

    assert (await store.submit(new_job(tenant="capped", max_active=1), T0 + 2)).created


async def test_a_job_keeps_its_webhook_url(store: Store) -> None:
    result = await store.submit(new_job(webhook_url="https://hooks.example.com/job"), T0)
    plain = await submit(store, T0)

    assert result.job.webhook_url == "https://hooks.example.com/job"
    assert await store.get(result.job.id) == result.job
    assert plain.webhook_url is None


async def test_a_job_keeps_the_traceparent_it_was_submitted_with(store: Store) -> None:
    traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    (traced, plain) = await store.submit_many([new_job(traceparent=traceparent), new_job()], T0)

    assert (await store.get(traced.job.id)) == traced.job
    assert traced.job.traceparent == traceparent
    assert (await store.get(plain.job.id)).traceparent is None  # type: ignore[union-attr]
