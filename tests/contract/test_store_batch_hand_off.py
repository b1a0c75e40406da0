"""Contract: a group of jobs handed to batch offload in one transaction
(`batch_hand_off`): each one's call opened under its tenant's budget, fitted in the
group's order after the calls already open, then the job offloaded; a job not held or
a call the budget cannot hold writes nothing."""

from __future__ import annotations

from contract_support import T0, running

from backroom.core.job import Job, JobState
from backroom.core.outcome import Succeeded
from backroom.core.provider_batch import HandOff
from backroom.core.spend import BudgetWindow, CallIntent, CallOpening
from backroom.store.protocol import Store, Tenant

DAY = BudgetWindow.daily(10_000, T0)
LANE = "mock/gpt"


def hand_off(job: Job, reserved: int | None = 3_000, budget: BudgetWindow | None = DAY) -> HandOff:
    lease = job.lease
    intent = CallIntent(job.id, lease.token, lease.attempt, job.tenant, "mock", "gpt", reserved, T0)
    return HandOff(lease, LANE, intent, budget)


async def offloaded(store: Store, job: Job) -> bool:
    stored = await store.get(job.id)
    assert stored is not None
    return stored.state is JobState.RUNNING and stored.lease_expires_at is None


async def test_a_group_opens_its_calls_in_order_within_the_budget(store: Store) -> None:
    await store.create_tenant(Tenant("acme", created_at=T0), "hash-1")
    jobs = [await running(store, tenant="acme") for _ in range(5)]
    await store.call_open(jobs[0].lease, hand_off(jobs[0]).intent, DAY)  # 3,000 held already

    openings = await store.batch_hand_off([hand_off(job) for job in jobs[1:]], T0 + 1)

    assert openings == [
        CallOpening(True, 0, 3_000),
        CallOpening(True, 0, 6_000),
        CallOpening(False, 0, 9_000),  # 9,000 + 3,000 > 10,000
        CallOpening(False, 0, 9_000),
    ]
    assert [await offloaded(store, job) for job in jobs[1:]] == [True, True, False, False]
    assert [len(await store.open_calls(job.id)) for job in jobs[1:]] == [1, 1, 0, 0]
    lines = await store.stray_jobs(T0 + 10, 10)
    assert sorted(job.id for job in lines) == [jobs[1].id, jobs[2].id]


async def test_jobs_not_held_are_skipped_and_unbudgeted_calls_always_open(store: Store) -> None:
    done, free, other = [await running(store) for _ in range(3)]
    await store.finish([(done.lease, Succeeded(1))], T0 + 1)

    openings = await store.batch_hand_off(
        [hand_off(done, budget=None), hand_off(free, None, None), hand_off(other, budget=None)],
        T0 + 2,
    )

    assert openings == [None, CallOpening(True), CallOpening(True)]
    assert await store.open_calls(done.id) == []
    assert [await offloaded(store, job) for job in (free, other)] == [True, True]
    assert [
        (await store.open_calls(job.id))[0].intent.reserved_pico_usd for job in (free, other)
    ] == [
        None,
        3_000,
    ]


async def test_an_empty_group_writes_nothing(store: Store) -> None:
    assert await store.batch_hand_off([], T0) == []
