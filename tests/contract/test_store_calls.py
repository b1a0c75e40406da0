"""Contract: paid LLM calls recorded before they are sent, budgets as hard caps."""

from __future__ import annotations

import asyncio

import pytest
from contract_support import BOOM, T0, Backend, running

from backroom.core.errors import LeaseLost
from backroom.core.job import Job, JobState, Lease
from backroom.core.outcome import Failed
from backroom.core.spend import BudgetWindow, CallIntent, CallOpening, CallState, OpenCall
from backroom.core.usage import DAY_MS, AttemptUsage, UsageTotals
from backroom.store.protocol import Store, Tenant

DAY = BudgetWindow.daily(10_000, T0)


def intent(job: Job, reserved: int | None = 3_000, *, at: int = T0) -> CallIntent:
    lease = job.lease
    return CallIntent(job.id, lease.token, lease.attempt, job.tenant, "mock", "gpt", reserved, at)


def usage(job: Job, cost: int | None, *, estimated: bool = False) -> AttemptUsage:
    attempt = job.lease.attempt
    return AttemptUsage(
        job.id, attempt, job.tenant, "gpt", None, 10, 0, 5, cost, T0 + 5,
        estimated=estimated, lease_token=job.lease.token,
    )  # fmt: skip


async def with_tenant(store: Store) -> None:
    await store.create_tenant(Tenant("acme", created_at=T0), "hash-1")


async def test_a_call_opens_within_the_budget_counting_open_reservations(store: Store) -> None:
    await with_tenant(store)
    jobs = [await running(store, tenant="acme") for _ in range(4)]

    first = await store.call_open(jobs[0].lease, intent(jobs[0]), DAY)
    second = await store.call_open(jobs[1].lease, intent(jobs[1]), DAY)
    third = await store.call_open(jobs[2].lease, intent(jobs[2]), DAY)
    fourth = await store.call_open(jobs[3].lease, intent(jobs[3]), DAY)

    assert (first, second, third) == (
        CallOpening(True, 0, 0),
        CallOpening(True, 0, 3_000),
        CallOpening(True, 0, 6_000),
    )
    assert fourth == CallOpening(False, 0, 9_000)  # 9,000 + 3,000 > 10,000
    assert await store.open_calls(jobs[3].id) == []


async def test_settling_frees_the_reservation_and_records_the_usage(store: Store) -> None:
    await with_tenant(store)
    one, two = await running(store, tenant="acme"), await running(store, tenant="acme")
    await store.call_open(one.lease, intent(one, 9_000), DAY)
    assert not (await store.call_open(two.lease, intent(two), DAY)).opened

    await store.call_settle(one.id, one.lease.token, usage(one, 1_000), CallState.SETTLED)

    assert await store.call_open(two.lease, intent(two), DAY) == CallOpening(True, 1_000, 0)
    assert await store.usage_totals(one.id) == UsageTotals(1, 10, 0, 5, 1_000)
    assert await store.open_calls(one.id) == []
    # A second settle of a closed call changes nothing: no usage is added or replaced.
    await store.call_settle(one.id, one.lease.token, usage(one, 7_000), CallState.CHARGED)
    assert await store.usage_totals(one.id) == UsageTotals(1, 10, 0, 5, 1_000)


async def test_an_unpriced_call_fits_no_budget_but_opens_without_one(store: Store) -> None:
    await with_tenant(store)
    job = await running(store, tenant="acme")

    assert not (await store.call_open(job.lease, intent(job, None), DAY)).opened
    assert (await store.call_open(job.lease, intent(job, None), None)).opened
    assert await store.open_calls(job.id) == [OpenCall(intent(job, None))]


async def test_open_calls_keep_their_response_id_until_settled(store: Store) -> None:
    job = await running(store)
    await store.call_open(job.lease, intent(job), None)

    await store.call_response(job.id, job.lease.token, "resp_1")

    assert await store.open_calls(job.id) == [OpenCall(intent(job), "resp_1")]
    await store.call_settle(job.id, job.lease.token, None, CallState.CHARGED)
    assert await store.open_calls(job.id) == []
    assert await store.usage_totals(job.id) == UsageTotals()


async def test_an_estimated_usage_is_stored_as_such(store: Store) -> None:
    job = await running(store)
    await store.call_open(job.lease, intent(job), None)

    estimate = usage(job, 3_000, estimated=True)
    await store.call_settle(job.id, job.lease.token, estimate, CallState.CHARGED)

    assert await store.usage_totals(job.id) == UsageTotals(1, 10, 0, 5, 3_000, estimated_calls=1)


async def test_a_call_opens_only_under_a_held_lease(store: Store) -> None:
    job = await running(store)
    stale = Lease(job.id, job.lease.token + 1, job.lease.attempt)

    with pytest.raises(LeaseLost):
        await store.call_open(stale, intent(job), None)


async def test_open_calls_of_yesterday_hold_budget_older_ones_do_not(store: Store) -> None:
    await with_tenant(store)
    old, recent, new = [await running(store, tenant="acme") for _ in range(3)]
    await store.call_open(old.lease, intent(old, 9_000, at=T0 - 2 * DAY_MS), None)
    await store.call_open(recent.lease, intent(recent, 5_000, at=DAY.since - 1), None)

    opening = await store.call_open(new.lease, intent(new, 5_000), DAY)
    assert opening == CallOpening(True, 0, 5_000)


async def test_a_pruned_jobs_call_records_go_with_it(store: Store) -> None:
    job = await running(store)
    await store.call_open(job.lease, intent(job), None)
    # The worker died mid-call: its call stays open, and the job ends on the sweep.
    assert await store.finish([(job.lease, Failed(BOOM))], T0 + 1) == [True]

    assert await store.prune(T0 + 2, [JobState.FAILED], limit=10) == 1

    assert await store.open_calls(job.id) == []


async def test_concurrent_openings_never_overshoot_the_budget(backend: Backend) -> None:
    """Thirty jobs race for a budget that holds three of their reservations, each
    through its own store (its own connections), as separate workers would."""
    stores = [await backend.open() for _ in range(6)]
    await with_tenant(stores[0])
    jobs = [await running(stores[0], tenant="acme") for _ in range(30)]

    openings = await asyncio.gather(
        *(
            stores[index % len(stores)].call_open(job.lease, intent(job), DAY)
            for index, job in enumerate(jobs)
        )
    )

    assert sum(opening.opened for opening in openings) == 3
    reserved = sum([len(await stores[0].open_calls(job.id)) for job in jobs]) * 3_000
    assert reserved == 9_000
