"""Contract: a redriven job's LLM spend before the redrive keeps counting.

A redrive starts a job's attempts again at 1, but its lease token goes on: usage is
recorded per claim (job, lease token), so the calls after a redrive add to the spend
of those before it, online (`call_settle`) and from a batch line (`batch_finish`).
"""

from __future__ import annotations

from contract_support import BOOM, LEASE_MS, T0, WORKER, submit

from backroom.core.job import Job, JobState
from backroom.core.outcome import Failed, Succeeded
from backroom.core.provider_batch import LineEnd
from backroom.core.spend import BudgetWindow, CallIntent, CallOpening, CallState
from backroom.core.usage import AttemptUsage, UsageTotals
from backroom.store.protocol import Store, Tenant
from backroom.store.records import RedriveFilter, UsageGroup, UsageGrouping, UsageQuery

BEFORE, AFTER = 1_000, 2_000
"""What the call before the redrive and the one after cost, in pico-dollars."""


def intent(job: Job) -> CallIntent:
    lease = job.lease
    return CallIntent(job.id, lease.token, lease.attempt, job.tenant, "mock", "gpt", 500, T0)


def usage(job: Job, cost: int, at: int) -> AttemptUsage:
    lease = job.lease
    return AttemptUsage(
        job.id, lease.attempt, job.tenant, "gpt", None, 10, 0, 5, cost, at,
        lease_token=lease.token,
    )  # fmt: skip


async def claimed(store: Store, now: int) -> Job:
    (job,) = await store.claim([], 1, WORKER, LEASE_MS, now)
    return job


async def spent_and_redriven(store: Store) -> tuple[Job, Job]:
    """A job whose first attempt spent `BEFORE` and failed, redriven and claimed again."""
    await store.create_tenant(Tenant("acme", created_at=T0), "hash-1")
    await submit(store, tenant="acme")
    first = await claimed(store, T0)
    await store.call_open(first.lease, intent(first), None)
    await store.call_settle(
        first.id, first.lease.token, usage(first, BEFORE, T0 + 1), CallState.SETTLED
    )
    assert await store.finish([(first.lease, Failed(BOOM))], T0 + 2) == [True]
    (redriven,) = await store.redrive(RedriveFilter(job_ids=[first.id]), T0 + 3)
    assert redriven.attempt == 0
    again = await claimed(store, T0 + 4)
    assert (again.id, again.attempt) == (first.id, first.attempt)  # the same attempt number
    assert again.lease_token > first.lease_token
    return first, again


async def test_a_redriven_jobs_calls_add_to_its_spend_before_the_redrive(store: Store) -> None:
    first, again = await spent_and_redriven(store)
    await store.call_open(again.lease, intent(again), None)

    await store.call_settle(
        again.id, again.lease.token, usage(again, AFTER, T0 + 5), CallState.SETTLED
    )

    both = UsageTotals(2, 20, 0, 10, BEFORE + AFTER)
    assert await store.usage_totals(first.id) == both
    assert await store.spent_pico_usd("acme", T0, T0 + 10) == BEFORE + AFTER
    by_tenant = UsageQuery(T0, T0 + 10, (UsageGrouping.TENANT,))
    assert await store.usage_groups(by_tenant) == [UsageGroup(("acme",), both)]
    calls = await store.attempt_usages(first.id)
    assert [(call.attempt, call.lease_token, call.cost_pico_usd) for call in calls] == [
        (1, first.lease_token, BEFORE),
        (1, again.lease_token, AFTER),
    ]
    # The budget counts both: 3,000 spent, and this call's 500 fits 3,500 exactly.
    budget = BudgetWindow.daily(BEFORE + AFTER + 500, T0 + 6)
    another = await submit(store, T0 + 6, tenant="acme")
    held = await claimed(store, T0 + 6)
    assert held.id == another.id
    assert await store.call_open(held.lease, intent(held), budget) == CallOpening(
        True, BEFORE + AFTER, 0
    )


async def test_a_redriven_jobs_batch_line_adds_to_its_spend_before_the_redrive(
    store: Store,
) -> None:
    first, again = await spent_and_redriven(store)
    assert await store.offload(again.lease, "mock/gpt", T0 + 5)
    await store.call_open(again.lease, intent(again), None)

    end = LineEnd(again.lease, Succeeded({"ok": 1}), usage(again, AFTER, T0 + 6))
    assert await store.batch_finish([end], T0 + 6) == [True]

    assert (await store.get(first.id)).state is JobState.SUCCEEDED  # type: ignore[union-attr]
    assert (await store.usage_totals(first.id)).cost_pico_usd == BEFORE + AFTER
    assert await store.spent_pico_usd("acme", T0, T0 + 10) == BEFORE + AFTER
