"""Contract: a deliverable read (the webhook dispatcher's) returns at most `limit`
events and scans up to `DELIVERABLE_SCAN` x `limit` for them."""

from __future__ import annotations

from contract_support import T0, submit
from test_store_feed import settled

from backroom.core.feed import DELIVERABLE_SCAN, START, FeedFilter, FeedPosition
from backroom.store.protocol import Store

NOBODY = FeedFilter(deliverable=())
ACME = FeedFilter(deliverable=("acme",))


async def positions(store: Store) -> list[FeedPosition]:
    """The position of every event in the feed, in order."""
    return [event.position for event in (await store.read_feed(START, FeedFilter(), 1_000)).events]


async def test_a_deliverable_read_scans_its_limit_times_the_scan_factor(store: Store) -> None:
    for n in range(DELIVERABLE_SCAN + 2):  # events none a webhook may be sent for
        await submit(store, T0 + n, tenant="beta")
    await settled(store)
    every = await positions(store)

    first = await store.read_feed(START, NOBODY, 1)
    rest = await store.read_feed(first.position, NOBODY, 1)

    assert (first.events, first.full, first.position) == ([], True, every[DELIVERABLE_SCAN - 1])
    assert (rest.events, rest.full, rest.position) == ([], False, every[-1])


async def test_a_deliverable_read_returns_its_limit_and_goes_on_after_the_last(
    store: Store,
) -> None:
    for n, tenant in enumerate(["acme", "beta", "acme", "beta", "acme"]):
        await submit(store, T0 + n, tenant=tenant)
    await settled(store)
    every = await positions(store)

    first = await store.read_feed(START, ACME, 2)
    rest = await store.read_feed(first.position, ACME, 2)

    assert [event.position for event in first.events] == [every[0], every[2]]
    assert (first.full, first.position) == (True, every[2])  # not past the beta after it
    assert [event.position for event in rest.events] == [every[4]]
    assert (rest.full, rest.position) == (False, every[4])


async def test_a_scan_that_ends_on_a_wanted_event_says_it_stopped_at_its_limit(
    store: Store,
) -> None:
    tenants = ["beta"] * (2 * DELIVERABLE_SCAN - 1) + ["acme", "beta"]
    for n, tenant in enumerate(tenants):
        await submit(store, T0 + n, tenant=tenant)
    await settled(store)
    every = await positions(store)

    page = await store.read_feed(START, ACME, 2)

    assert [event.position for event in page.events] == [every[2 * DELIVERABLE_SCAN - 1]]
    assert (page.full, page.position) == (True, every[2 * DELIVERABLE_SCAN - 1])
