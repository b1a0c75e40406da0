"""Contract: reads of the queues as a whole (queue depths, finish counts, dead letters)."""

from __future__ import annotations

from contract_support import BOOM, T0, running, submit

from backroom.core.job import ErrorInfo, JobState
from backroom.core.outcome import Cancelled, Failed, Outcome, Succeeded
from backroom.core.usage import AttemptUsage
from backroom.store.insight_protocol import DeadLetterGroup, FinishedCount, QueueDepth
from backroom.store.protocol import JobFilter, Store

MINUTE = 60_000
TIMEOUT = ErrorInfo("TimeoutError", "too slow")


async def test_queue_depths_count_queued_and_running_jobs_per_queue_and_tenant(
    store: Store,
) -> None:
    await running(store, queue="batch", tenant="acme")
    await submit(store, queue="batch", tenant="acme", run_at=T0 - 5_000)
    await submit(store, queue="batch", tenant="globex", run_at=T0 + MINUTE)
    done = await running(store, queue="interactive", tenant="acme")
    await store.finish([(done.lease, Succeeded(None))], T0)

    everyone = await store.queue_depths(T0, None)
    globex = await store.queue_depths(T0, "globex")

    assert everyone == [QueueDepth("batch", 2, 1, T0 - 5_000)]
    assert globex == [QueueDepth("batch", 1, 0, None)]


async def test_finished_counts_are_per_queue_slot_and_state_since_the_start(store: Store) -> None:
    ends: list[tuple[int, str, Outcome]] = [
        (T0 - 1, "batch", Succeeded(None)),  # before the window: not counted
        (T0 + 10, "batch", Succeeded(None)),
        (T0 + 20, "batch", Failed(BOOM)),
        (T0 + MINUTE + 5, "batch", Succeeded(None)),
        (T0 + 30, "interactive", Cancelled()),
    ]
    for at, queue, outcome in ends:
        tenant = "globex" if at == T0 + 20 else "acme"
        job = await running(store, at, queue=queue, tenant=tenant, run_at=at)
        await store.finish([(job.lease, outcome)], at)

    counts = await store.finished_counts(T0, MINUTE, None)
    acme = await store.finished_counts(T0, MINUTE, "acme")

    assert counts == [
        FinishedCount("batch", T0, JobState.FAILED, 1),
        FinishedCount("batch", T0, JobState.SUCCEEDED, 1),
        FinishedCount("batch", T0 + MINUTE, JobState.SUCCEEDED, 1),
        FinishedCount("interactive", T0, JobState.CANCELLED, 1),
    ]
    assert FinishedCount("batch", T0, JobState.FAILED, 1) not in acme


async def test_dead_letters_are_grouped_by_task_and_error_class(store: Store) -> None:
    failures = [("summarize", BOOM), ("summarize", BOOM), ("summarize", TIMEOUT), ("embed", BOOM)]
    ids = []
    for task, error in failures:
        job = await running(store, task=task, tenant="acme", max_attempts=1)
        await store.finish([(job.lease, Failed(error))], T0)
        ids.append(job.id)
    await running(store, task="embed", tenant="globex")

    groups = await store.dead_letter_groups(None)

    assert groups == [
        DeadLetterGroup("summarize", "RuntimeError", 2, ids[1], "boom"),
        DeadLetterGroup("embed", "RuntimeError", 1, ids[3], "boom"),
        DeadLetterGroup("summarize", "TimeoutError", 1, ids[2], "too slow"),
    ]
    assert await store.dead_letter_groups("globex") == []


async def test_list_jobs_searches_input_metadata_and_errors_within_a_creation_range(
    store: Store,
) -> None:
    failed = await running(store, T0 + 20, payload={"text": "dogs"}, max_attempts=1, run_at=T0)
    await store.finish([(failed.lease, Failed(ErrorInfo("CatError", "no")))], T0 + 20)
    about_cats = await submit(store, payload={"text": "About Cats"}, run_at=T0)
    tagged = await submit(store, T0 + 10, metadata={"customer": "CATalina"}, run_at=T0)
    dogs = await submit(store, T0 + 30, payload={"text": "dogs"})

    found = await store.list_jobs(JobFilter(search="cat"))
    early = await store.list_jobs(JobFilter(search="cat", created_until=T0 + 10))
    late = await store.list_jobs(JobFilter(created_from=T0 + 20))

    assert [job.id for job in found] == [tagged.id, about_cats.id, failed.id]
    assert [job.id for job in early] == [about_cats.id]
    assert [job.id for job in late] == [dogs.id, failed.id]


async def test_running_jobs_are_listed_by_lease_end_for_a_tenant_or_everyone(
    store: Store,
) -> None:
    early = await running(store, T0, tenant="acme")
    late = await running(store, T0 + 5_000, tenant="globex")
    await submit(store, tenant="acme")

    everyone = await store.running_jobs(None, 10)
    acme = await store.running_jobs("acme", 10)
    first = await store.running_jobs(None, 1)

    assert [job.id for job in everyone] == [early.id, late.id]
    assert [job.id for job in acme] == [early.id]
    assert [job.id for job in first] == [early.id]


async def test_delete_jobs_deletes_only_the_tenants_finished_jobs_among_those_named(
    store: Store,
) -> None:
    done = await running(store, tenant="acme")
    await store.finish([(done.lease, Succeeded("ok"))], T0)
    failed = await running(store, tenant="acme", max_attempts=1)
    await store.finish([(failed.lease, Failed(BOOM))], T0)
    theirs = await running(store, tenant="globex")
    await store.finish([(theirs.lease, Succeeded(None))], T0)
    busy = await running(store, tenant="acme")
    waiting = await submit(store, tenant="acme")
    named = [done.id, failed.id, theirs.id, busy.id, waiting.id, 999_999]

    deleted = await store.delete_jobs(named, "acme")

    assert deleted == 2
    assert await store.get(done.id) is None
    assert await store.get(failed.id) is None
    assert await store.attempts(done.id) == []
    assert await store.events(done.id) == []
    assert [await store.get(job.id) is not None for job in (theirs, busy, waiting)] == [True] * 3
    assert await store.delete_jobs([theirs.id], None) == 1


async def test_attempt_usages_are_each_attempts_call_in_order(store: Store) -> None:
    job = await running(store, tenant="acme")
    calls = [
        AttemptUsage(job.id, n, "acme", "gpt-test", None, 100 * n, 0, 10, cost, T0, lease_token=n)
        for n, cost in ((2, None), (1, 5_000))
    ]
    for usage in calls:
        await store.record_usage(usage)

    assert await store.attempt_usages(job.id) == [calls[1], calls[0]]
    assert await store.attempt_usages(job.id + 1) == []
