"""Contract: the webhook dispatcher, over each store, turns every event into its
deliveries once: with no subscription (only terminal events of jobs with their own
URL are read in full), with one, in batches that end anywhere, and with two
dispatchers on two stores of one database taking batches from each other."""

from __future__ import annotations

import asyncio

import pytest
from contract_support import BOOM, LEASE_MS, T0, WORKER, Backend, submit
from test_store_feed import settled

from backroom.clock import SimClock
from backroom.core.job import DEFAULT_QUEUE, Job
from backroom.core.outcome import Failed, Succeeded
from backroom.core.webhooks import JOB_WEBHOOK, NewSubscription
from backroom.store.protocol import Store
from backroom.webhooks.dispatcher import WebhookDispatcher

HOOK = "https://beta.test/hook"

Expected = dict[int, list[tuple[int, str]]]
"""Each job's deliveries: (subscription id, event type), sorted."""


def dispatcher(store: Store, batch: int) -> WebhookDispatcher:
    return WebhookDispatcher(store, SimClock(T0 + 1_000), lambda job_id: f"/{job_id}", batch=batch)


async def to_the_end(dispatching: WebhookDispatcher) -> None:
    while await dispatching.dispatch_once():
        pass


async def delivered(store: Store, jobs: Expected) -> Expected:
    return {
        job_id: sorted(
            (item.subscription_id, item.event_type)
            for item in await store.list_deliveries(job_id, None)
        )
        for job_id in jobs
    }


async def started(store: Store, **fields: object) -> Job:
    """A job submitted and claimed (from its queue: delivery jobs wait in theirs)."""
    job = await submit(store, T0, **fields)
    (claimed,) = await store.claim([DEFAULT_QUEUE], 1, WORKER, LEASE_MS, T0)
    assert claimed.id == job.id
    return claimed


async def finished(store: Store, outcome: Succeeded | Failed, **fields: object) -> Job:
    job = await started(store, **fields)
    await store.finish([(job.lease, outcome)], T0 + 1)
    return job


async def unsubscribed_jobs(store: Store) -> Expected:
    """Jobs of every kind while no tenant subscribes; the deliveries each calls for."""
    done = await finished(store, Succeeded(None), tenant="beta", webhook_url=HOOK)
    failed = await finished(store, Failed(BOOM), tenant="beta", webhook_url=HOOK)
    plain = await finished(store, Succeeded(None), tenant="beta")
    acme = await finished(store, Succeeded(None), tenant="acme")
    cancelled = await submit(store, T0, tenant="beta", webhook_url=HOOK)
    assert await store.cancel(cancelled.id, T0 + 1) is not None
    waiting = await started(store, tenant="beta", webhook_url=HOOK)
    return {
        done.id: [(JOB_WEBHOOK, "job.succeeded")],
        failed.id: [(JOB_WEBHOOK, "job.failed")],
        cancelled.id: [(JOB_WEBHOOK, "job.cancelled")],
        plain.id: [],
        acme.id: [],
        waiting.id: [],
    }


async def subscribed_jobs(store: Store) -> Expected:
    """Jobs once acme subscribes to submissions and successes; their deliveries."""
    new = NewSubscription("acme", "https://acme.test/h", ("job.submitted", "job.succeeded"), "s")
    sub = (await store.create_subscription(new, T0)).id
    acme = await finished(store, Succeeded(None), tenant="acme")
    both = await finished(store, Succeeded(None), tenant="acme", webhook_url=HOOK)
    beta = await finished(store, Succeeded(None), tenant="beta", webhook_url=HOOK)
    plain = await finished(store, Succeeded(None), tenant="beta")
    return {
        acme.id: [(sub, "job.submitted"), (sub, "job.succeeded")],
        both.id: [(JOB_WEBHOOK, "job.succeeded"), (sub, "job.submitted"), (sub, "job.succeeded")],
        beta.id: [(JOB_WEBHOOK, "job.succeeded")],
        plain.id: [],
    }


@pytest.mark.parametrize("batch", [1, 2, 500])
async def test_every_event_becomes_its_deliveries_once(backend: Backend, batch: int) -> None:
    store = await backend.open()
    await store.feed_consumer("webhooks", T0)  # the dispatcher starts at the head
    first = dispatcher(store, batch)

    expected = await unsubscribed_jobs(store)
    await settled(store)
    await to_the_end(first)
    expected |= await subscribed_jobs(store)
    await settled(store)
    await to_the_end(first)
    await to_the_end(dispatcher(await backend.open(), batch))  # finds nothing left

    assert await delivered(store, expected) == expected


async def test_two_dispatchers_taking_batches_from_each_other_deliver_each_event_once(
    backend: Backend,
) -> None:
    first, second = await backend.open(), await backend.open()
    await first.feed_consumer("webhooks", T0)
    hooked = [await finished(first, Succeeded(None), webhook_url=HOOK) for _ in range(20)]
    plain = [await finished(first, Succeeded(None)) for _ in range(20)]
    await settled(first)

    # Each stops at its first lost race; what is left, a third one dispatches.
    await asyncio.gather(*(to_the_end(dispatcher(store, 3)) for store in (first, second)))
    await to_the_end(dispatcher(first, 3))

    expected = {job.id: [(JOB_WEBHOOK, "job.succeeded")] for job in hooked}
    expected |= {job.id: [] for job in plain}
    assert await delivered(second, expected) == expected
