"""Contract: pruning finished jobs past their retention, with the history they leave."""

from __future__ import annotations

import asyncio

import pytest
from contract_support import BOOM, T0, Backend, running, submit

from backroom.core.feed import FeedFilter
from backroom.core.job import Job, JobState
from backroom.core.outcome import Failed, Outcome, Succeeded
from backroom.store.protocol import Store

CUTOFF = T0 + 1_000
"""Jobs that finished before this are old enough to prune."""

OLD = CUTOFF - 1
RECENT = CUTOFF + 1
SUCCEEDED_OR_CANCELLED = (JobState.SUCCEEDED, JobState.CANCELLED)
FINAL_STATES = (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)


async def ended(store: Store, outcome: Outcome, at: int) -> Job:
    """A job claimed at T0 whose only attempt ended with `outcome` at `at`."""
    job = await running(store)
    assert await store.finish([(job.lease, outcome)], at) == [True]
    return job


async def cancelled(store: Store, at: int) -> Job:
    """A queued job cancelled at `at`."""
    job = await submit(store)
    await store.cancel(job.id, at)
    return job


async def test_prune_deletes_the_named_states_finished_before_the_cutoff(store: Store) -> None:
    old_success = await ended(store, Succeeded(1), OLD)
    old_failure = await ended(store, Failed(BOOM), OLD)
    old_cancel = await cancelled(store, OLD)
    recent_success = await ended(store, Succeeded(2), RECENT)
    still_running = await running(store)
    still_queued = await submit(store)

    deleted = await store.prune(CUTOFF, SUCCEEDED_OR_CANCELLED, limit=100)

    assert deleted == 2
    assert await store.get(old_success.id) is None
    assert await store.get(old_cancel.id) is None
    kept = [old_failure, recent_success, still_running, still_queued]
    assert [await store.get(job.id) is not None for job in kept] == [True] * 4


async def test_a_job_that_finished_exactly_at_the_cutoff_is_kept(store: Store) -> None:
    job = await ended(store, Succeeded(1), CUTOFF)

    assert await store.prune(CUTOFF, FINAL_STATES, limit=100) == 0
    assert await store.prune(CUTOFF + 1, FINAL_STATES, limit=100) == 1
    assert await store.get(job.id) is None


async def test_a_pruned_jobs_attempts_and_events_go_with_it(store: Store) -> None:
    pruned = await ended(store, Failed(BOOM), OLD)
    kept = await ended(store, Failed(BOOM), RECENT)
    kept_attempts, kept_events = await store.attempts(kept.id), await store.events(kept.id)

    await store.prune(CUTOFF, FINAL_STATES, limit=100)

    assert await store.attempts(pruned.id) == []
    assert await store.events(pruned.id) == []
    assert await store.attempts(kept.id) == kept_attempts
    assert await store.events(kept.id) == kept_events


async def test_the_newest_jobs_ids_are_not_handed_out_again_after_pruning(store: Store) -> None:
    pruned = await ended(store, Succeeded(1), OLD)
    assert await store.prune(CUTOFF, FINAL_STATES, limit=100) == 1

    assert (await submit(store)).id > pruned.id


async def test_a_feed_reader_sees_the_first_event_after_the_newest_ones_were_pruned(
    store: Store,
) -> None:
    await ended(store, Succeeded(1), OLD)
    read_so_far = await store.feed_head()
    assert await store.prune(CUTOFF, FINAL_STATES, limit=100) == 1

    job = await submit(store)

    # On PostgreSQL the feed shows a commit once every older transaction on the server
    # (other test runs') has ended: wait for the new event, with a deadline.
    deadline = asyncio.get_running_loop().time() + 30
    while not (page := await store.read_feed(read_so_far, FeedFilter(), 100)).events:
        assert asyncio.get_running_loop().time() < deadline, "the new event never showed"
        await asyncio.sleep(0.01)
    assert [event.job_id for event in page.events] == [job.id]


async def test_one_call_prunes_at_most_limit_jobs(store: Store) -> None:
    for _ in range(5):
        await ended(store, Succeeded(None), OLD)

    deleted = [await store.prune(CUTOFF, FINAL_STATES, limit=2) for _ in range(4)]

    assert deleted == [2, 2, 1, 0]


@pytest.mark.parametrize("state", [JobState.QUEUED, JobState.RUNNING])
async def test_unfinished_jobs_can_never_be_pruned(store: Store, state: JobState) -> None:
    job = await ended(store, Succeeded(1), OLD)

    with pytest.raises(ValueError, match="only finished jobs"):
        await store.prune(CUTOFF, [JobState.SUCCEEDED, state], limit=100)

    assert await store.get(job.id) is not None


async def test_stores_pruning_at_once_delete_each_job_once(backend: Backend) -> None:
    stores = [await backend.open() for _ in range(3)]
    for _ in range(30):
        await ended(stores[0], Succeeded(None), OLD)

    async def prune_all(store: Store) -> int:
        total = 0
        while deleted := await store.prune(CUTOFF, FINAL_STATES, limit=4):
            total += deleted
        return total

    totals = await asyncio.gather(*(prune_all(store) for store in stores))

    assert sum(totals) == 30
    assert await stores[0].prune(CUTOFF, FINAL_STATES, limit=100) == 0
