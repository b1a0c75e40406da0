"""Batch offload's other ends, for each provider kind: an expired batch sends its unfinished
jobs back (their last attempt called online), cancelling jobs in an open batch cancels
them (and the provider batch once none is left), and the budget is reserved at hand-off
and settled at the batch price."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from decimal import Decimal

import pytest
from batch_offload_support import (
    KINDS,
    all_finished,
    batch_job,
    mock_batches,
    offload_app,
    running_worker,
)
from deadline_polls import until

from backroom import App
from backroom.clock import SystemClock
from backroom.core.job import Job, JobState
from backroom.core.usage import DailyBudget
from backroom.llm.batch.provider import BatchState
from backroom.llm.mock.batch_jobs import BatchMockConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.settings import ProviderKind
from backroom.service.api_keys import issue_key

BATCH_COST = "0.00000195"  # 2 input, 6 output tokens at half of $0.15 and $0.60 a million


@pytest.fixture
def expiring_url() -> Iterator[str]:
    # Expired at 300 ms, half way through: Anthropic's lines have run one by one until
    # then, OpenAI's mock answers the first half.
    batches = BatchMockConfig(delay_ms=600, expire_ms=300)
    with running_mock(MockConfig(batches=batches)) as url:
        yield url


@pytest.fixture
def slow_url() -> Iterator[str]:
    with running_mock(MockConfig(batches=BatchMockConfig(delay_ms=60_000))) as url:
        yield url


def cost(job: Job) -> object:
    assert isinstance(job.result, dict) and isinstance(job.result["usage"], dict)
    return job.result["usage"]["cost_usd"]


@pytest.mark.parametrize("kind", KINDS)
async def test_an_expired_batch_sends_its_unfinished_jobs_back(
    expiring_url: str, database_url: str, kind: ProviderKind
) -> None:
    tag = secrets.token_hex(4)
    quick = {"flush_after_s": 1}
    async with offload_app(database_url, expiring_url, quick, kind) as (app, _):
        await app.submit_many([batch_job(app, f"job {n:02d} {tag}") for n in range(16)])
        async with running_worker(app):
            jobs = await all_finished(app, 16, seconds=90)
        # Read while the app is open: a closed app's store would open anew, unclosed.
        firsts = [(await app.attempts(job.id))[0] for job in jobs if job.attempt > 1]
    assert all(job.state is JobState.SUCCEEDED for job in jobs)
    in_batches = [job for job in jobs if job.attempt < 4]
    online = [job for job in jobs if job.attempt == 4]  # a retried job's last attempt
    assert in_batches and online
    (batch_cost,) = {cost(job) for job in in_batches}  # the prompts' lengths are all equal
    (online_cost,) = {cost(job) for job in online}
    assert Decimal(str(online_cost)) == 2 * Decimal(str(batch_cost))
    for first in firsts:
        assert first.error is not None and "batch ended before this line ran" in first.error.message
    ended = await mock_batches(expiring_url, kind)
    assert {batch.state for batch in ended} == {BatchState.EXPIRED}


async def offloaded(app: App, count: int) -> list[Job]:
    """Wait until `count` jobs wait in an open provider batch."""

    async def in_batches() -> bool:
        batches = await app.store.provider_batches()
        return sum(batch.counts.total for batch in batches if batch.provider_batch_id) == count

    await until(in_batches, f"{count} jobs in provider batches", 60)
    return await app.list_jobs()


@pytest.mark.parametrize("kind", KINDS)
async def test_cancelling_every_job_of_a_batch_cancels_the_batch(
    slow_url: str, database_url: str, kind: ProviderKind
) -> None:
    async with offload_app(database_url, slow_url, kind=kind) as (app, _):
        await app.submit_many([batch_job(app, f"cancel me {n}") for n in range(5)])
        async with running_worker(app):
            for job in await offloaded(app, 5):
                await app.cancel(job.id)
            jobs = await all_finished(app, 5, seconds=60)

            async def provider_cancelled() -> bool:
                # One batch, or two when a loaded machine spread the hand-offs past a flush.
                batches = await mock_batches(slow_url, kind)
                return {batch.state for batch in batches} == {BatchState.CANCELLED}

            await until(provider_cancelled, "the provider batch to be cancelled", 30)
            await until(lambda: _no_batches(app), "the batch to close", 30)
        assert all([await app.store.open_calls(job.id) == [] for job in jobs])  # never billed
    assert {job.state for job in jobs} == {JobState.CANCELLED}


async def _no_batches(app: App) -> bool:
    return await app.store.provider_batches() == []


@pytest.mark.parametrize("kind", KINDS)
async def test_the_budget_is_reserved_at_hand_off_and_settled_at_the_batch_price(
    database_url: str, kind: ProviderKind
) -> None:
    batches = BatchMockConfig(delay_ms=1_500)
    with running_mock(MockConfig(batches=batches)) as url:
        async with offload_app(database_url, url, kind=kind) as (app, _):
            await issue_key(app, "acme", daily_budget=DailyBudget.of_usd(Decimal(1)))
            await app.submit_many([batch_job(app, f"budget {n}") for n in range(3)])
            async with running_worker(app):
                waiting = await offloaded(app, 3)
                calls = [await app.store.open_calls(job.id) for job in waiting]
                assert all(len(open_calls) == 1 for open_calls in calls)
                assert all(c[0].intent.reserved_pico_usd for c in calls)  # the worst case
                jobs = await all_finished(app, 3, seconds=60)
            assert all([await app.store.open_calls(job.id) == [] for job in jobs])
            totals = [await app.store.usage_totals(job.id) for job in jobs]
    assert {cost(job) for job in jobs} == {BATCH_COST}
    assert sum(total.cost_pico_usd for total in totals) == 3 * 1_950_000


class LateClock(SystemClock):
    """The system clock, moved on by `skip_ms` at will (the mock's batches end then)."""

    def __init__(self) -> None:
        self.skip_ms = 0

    def now(self) -> int:
        return super().now() + self.skip_ms


@pytest.mark.parametrize("kind", KINDS)
async def test_a_cancelled_jobs_line_that_ran_is_billed_once_and_the_job_stays_cancelled(
    database_url: str, kind: ProviderKind
) -> None:
    clock = LateClock()
    # Both jobs in one batch, however slow the machine: a batch of the cancelled job
    # alone would be cancelled with it, and its line would never run.
    together = {"flush_jobs": 2, "flush_after_s": 30}
    with running_mock(MockConfig(batches=BatchMockConfig(delay_ms=60_000)), clock) as url:
        async with offload_app(database_url, url, together, kind) as (app, _):
            await app.submit_many([batch_job(app, f"bill me {n}") for n in range(2)])
            async with running_worker(app):
                kept, dropped = sorted(await offloaded(app, 2), key=lambda job: job.id)
                await app.cancel(dropped.id)

                async def cancelled() -> bool:
                    return (await app.get(dropped.id)).state is JobState.CANCELLED

                await until(cancelled, "the job to be cancelled in its batch", 30)
                assert len(await app.store.open_calls(dropped.id)) == 1  # still reserved
                clock.skip_ms = 60_000  # the batch ends, the cancelled job's line with it
                jobs = await all_finished(app, 2, seconds=60)
                await until(lambda: _no_batches(app), "the batch to close", 30)
            assert await app.store.open_calls(dropped.id) == []
            spent = [await app.store.usage_totals(job.id) for job in (kept, dropped)]
    assert [job.state for job in jobs] == [JobState.SUCCEEDED, JobState.CANCELLED]
    assert jobs[1].result is None
    # Its line ran and was billed: the same cost as its twin's, recorded once.
    assert spent[1] == spent[0]
    assert (spent[1].calls, spent[1].cost_pico_usd) == (1, 2_325_000)  # 3 in, 7 out, half price
