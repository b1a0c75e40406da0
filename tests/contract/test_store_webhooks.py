"""Contract: webhook subscriptions, signing secrets, deliveries and their attempts."""

from __future__ import annotations

from contract_support import LEASE_MS, T0, WORKER, submit
from test_store_feed import deliveries_job, delivery

from backroom.core.feed import FeedPosition
from backroom.core.job import NewJob
from backroom.core.webhooks import (
    JOB_WEBHOOK,
    DeliveryAttempt,
    NewSubscription,
    SubscriptionOutcome,
)
from backroom.store.protocol import Store


def subscription(
    tenant: str = "acme", tasks: tuple[str, ...] = (), queues: tuple[str, ...] = ()
) -> NewSubscription:
    return NewSubscription(
        tenant=tenant,
        url="https://hooks.example.com/in",
        event_types=("job.succeeded", "job.failed"),
        secret="whsec_c2VjcmV0",
        tasks=tasks,
        queues=queues,
    )


async def test_a_subscription_is_stored_and_scoped_to_its_tenant(store: Store) -> None:
    made = await store.create_subscription(subscription(tasks=("a",), queues=("batch",)), T0)
    await store.create_subscription(subscription("other"), T0)

    assert made.enabled and made.failure_streak == 0
    assert (made.tasks, made.queues) == (("a",), ("batch",))
    assert await store.get_subscription(made.id, "acme") == made
    assert await store.get_subscription(made.id, "other") is None
    assert [item.tenant for item in await store.list_subscriptions("acme", enabled_only=False)] == [
        "acme"
    ]
    assert len(await store.list_subscriptions(None, enabled_only=True)) == 2
    assert not await store.delete_subscription(made.id, "other")
    assert await store.delete_subscription(made.id, "acme")
    assert await store.get_subscription(made.id, None) is None


async def test_rotation_keeps_the_old_secret_for_its_grace(store: Store) -> None:
    made = await store.create_subscription(subscription(), T0)

    rotated = await store.rotate_subscription_secret(made.id, "acme", "whsec_bmV3", T0 + 100, T0)

    assert rotated is not None
    assert rotated.signing_secrets(T0 + 99) == ["whsec_bmV3", "whsec_c2VjcmV0"]
    assert rotated.signing_secrets(T0 + 100) == ["whsec_bmV3"]
    assert await store.rotate_subscription_secret(made.id, "other", "x", T0, T0) is None


async def delivery_of(store: Store, subscription_id: int) -> int:
    """A stored delivery to `subscription_id`; its id."""
    start = await store.feed_consumer("webhooks", T0)
    event = start.event_id + 1
    await store.dispatch_deliveries(
        "webhooks",
        start,
        FeedPosition(0, event),
        [delivery(event, subscription_id)],
        deliveries_job,
        T0,
    )
    return (await store.list_deliveries(1, None))[-1].id


async def attempt(
    store: Store, delivery_id: int, at: int, outcome: SubscriptionOutcome | None
) -> None:
    status = 200 if outcome is not None and outcome.succeeded else 500
    report = DeliveryAttempt(delivery_id, 0, at, status, 3)
    await store.record_delivery_attempt(report, "retrying", outcome)


async def test_a_failure_streak_disables_and_a_success_ends_it(store: Store) -> None:
    made = await store.create_subscription(subscription(), T0)
    delivery_id = await delivery_of(store, made.id)
    failed, succeeded = SubscriptionOutcome(False, 3), SubscriptionOutcome(True, 3)

    for n in range(2):
        await attempt(store, delivery_id, T0 + n, failed)
    await attempt(store, delivery_id, T0 + 2, succeeded)
    after_success = await store.get_subscription(made.id, None)
    await attempt(store, delivery_id, T0 + 3, None)  # an attempt without an outcome
    for n in range(3):
        await attempt(store, delivery_id, T0 + 4 + n, failed)
    disabled = await store.get_subscription(made.id, None)

    assert after_success is not None and after_success.failure_streak == 0
    assert disabled is not None and not disabled.enabled
    assert disabled.disabled_reason == "disabled after 3 failed deliveries in a row"
    assert disabled.updated_at == T0 + 6
    assert await store.list_subscriptions(None, enabled_only=True) == []
    assert [a.number for a in await store.delivery_attempts(delivery_id)] == list(range(1, 8))


async def test_a_reason_disables_at_once(store: Store) -> None:
    made = await store.create_subscription(subscription(), T0)
    other = await store.create_subscription(subscription(), T0)
    delivery_id = await delivery_of(store, made.id)

    await attempt(store, delivery_id, T0, SubscriptionOutcome(False, 50, "410 Gone"))

    disabled = await store.get_subscription(made.id, None)
    assert disabled is not None and (disabled.enabled, disabled.disabled_reason) == (
        False,
        "410 Gone",
    )
    assert await store.get_subscription(other.id, None) == other  # only the delivery's own


async def test_an_outgoing_delivery_comes_with_what_signs_it(store: Store) -> None:
    made = await store.create_subscription(subscription(), T0)
    to_subscription = await delivery_of(store, made.id)
    to_job_url = await delivery_of(store, JOB_WEBHOOK)
    secret = await store.signing_secret("acme", "whsec_Zmlyc3Q=", T0)

    outgoing = await store.outgoing_delivery(to_subscription)
    own = await store.outgoing_delivery(to_job_url)
    assert await store.delete_subscription(made.id, None)
    orphan = await store.outgoing_delivery(to_subscription)

    assert outgoing is not None and outgoing.delivery.subscription_id == made.id
    assert (outgoing.subscription, outgoing.secret) == (made, None)
    assert own is not None and (own.subscription, own.secret) == (None, secret)
    assert orphan is not None and orphan.subscription is None
    assert await store.outgoing_delivery(to_job_url + 100) is None


async def test_a_tenant_signing_secret_is_made_once_and_rotates(store: Store) -> None:
    assert await store.signing_secret("acme", None, T0) is None
    first = await store.signing_secret("acme", "whsec_Zmlyc3Q=", T0)
    again = await store.signing_secret("acme", "whsec_aWdub3JlZA==", T0)
    rotated = await store.rotate_signing_secret("acme", "whsec_bmV3", T0 + 10, T0)

    assert first is not None and again == first
    assert rotated.signing_secrets(T0) == ["whsec_bmV3", "whsec_Zmlyc3Q="]
    assert await store.signing_secret("acme", None, T0) == rotated


async def test_attempts_are_numbered_and_the_delivery_tracks_the_last(store: Store) -> None:
    start = await store.feed_consumer("webhooks", T0)
    await store.dispatch_deliveries(
        "webhooks", start, FeedPosition(0, start.event_id + 1), [delivery(3)], deliveries_job, T0
    )
    (made,) = await store.list_deliveries(1, "acme")

    first = await store.record_delivery_attempt(
        DeliveryAttempt(made.id, 0, T0 + 1, 503, 12, "HTTP 503"), "retrying"
    )
    second = await store.record_delivery_attempt(
        DeliveryAttempt(made.id, 0, T0 + 2, 200, 7), "succeeded"
    )
    stored = await store.get_delivery(made.id, "acme")

    assert (first.number, second.number) == (1, 2)
    assert stored is not None
    assert (stored.state, stored.attempts, stored.last_status, stored.last_latency_ms) == (
        "succeeded",
        2,
        200,
        7,
    )
    assert [attempt.status for attempt in await store.delivery_attempts(made.id)] == [503, 200]
    assert await store.get_delivery(made.id, "other") is None


async def test_a_redelivery_is_a_new_job_for_the_same_delivery(store: Store) -> None:
    start = await store.feed_consumer("webhooks", T0)
    await store.dispatch_deliveries(
        "webhooks", start, FeedPosition(0, start.event_id + 1), [delivery(3)], deliveries_job, T0
    )
    (made,) = await store.list_deliveries(1, None)

    redelivered = await store.redeliver(made.id, "acme", _again, T0 + 5)
    jobs = await store.claim(["webhooks"], 10, WORKER, LEASE_MS, T0 + 5)

    assert redelivered is not None
    assert redelivered.message_id == made.message_id
    assert redelivered.delivery_job_id != made.delivery_job_id
    assert len(jobs) == 2
    assert await store.redeliver(made.id, "other", _again, T0 + 6) is None


def _again(delivery_id: int) -> NewJob:
    return NewJob(
        task="webhooks.deliver",
        input={"delivery_id": delivery_id},
        run_at=T0,
        tenant="_webhooks",
        queue="webhooks",
        idempotency_key=f"delivery-{delivery_id}-again",
    )


async def test_the_jobs_of_a_batch_of_events_are_read_together(store: Store) -> None:
    first = await submit(store, T0, tenant="acme", webhook_url="https://x.test/h")
    second = await submit(store, T0, tenant="other")

    found = await store.feed_jobs([second.id, first.id, second.id + 100])

    assert found == {first.id: first, second.id: second}
    assert found[first.id].webhook_url == "https://x.test/h"
    assert await store.feed_jobs([]) == {}
