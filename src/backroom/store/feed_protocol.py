"""The parts of the store protocol behind the event feed and webhooks.

`EventFeed` is what stream readers and the webhook dispatcher use; `WebhookStore` is
what the webhook service and the delivery task use. `Store` includes both (`FeedStore`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Protocol

from backroom.core.feed import FeedFilter, FeedPage, FeedPosition
from backroom.core.job import Job, NewJob
from backroom.core.webhooks import (
    DeliveryAttempt,
    NewDelivery,
    NewSubscription,
    OutgoingDelivery,
    SigningSecret,
    SubscriptionOutcome,
    WebhookDelivery,
    WebhookSubscription,
)


class EventFeed(Protocol):
    """Every job's events in one order, readable from a position, and durable readers."""

    def on_feed_change(self, callback: Callable[[], None]) -> None:
        """Call `callback` (on the event loop) whenever events may have been added.

        SQLite hears of its own process's writes, PostgreSQL of every process's through
        LISTEN/NOTIFY; readers still poll as a fallback.
        """

    async def read_feed(self, after: FeedPosition, where: FeedFilter, limit: int) -> FeedPage:
        """Up to `limit` events after `after` that `where` lets through, in feed order.

        Never returns an event that a transaction still running could be followed by a
        smaller position than, so a reader that moves to `FeedPage.position` skips nothing.
        """

    async def feed_jobs(self, job_ids: Collection[int]) -> dict[int, Job]:
        """The jobs of `job_ids` that still exist (any tenant's), by id, in one read: the
        jobs a batch of events concerns."""

    async def feed_head(self) -> FeedPosition:
        """The position of the newest readable event (START if there are none)."""

    async def feed_consumer(self, consumer: str, now: int) -> FeedPosition:
        """The stored position of the durable reader `consumer`; a new one starts at the head.

        Retention keeps every event after the oldest durable reader's position.
        """

    async def dispatch_deliveries(
        self,
        consumer: str,
        expected: FeedPosition,
        to: FeedPosition,
        deliveries: Sequence[NewDelivery],
        delivery_job: Callable[[int], NewJob],
        now: int,
    ) -> bool:
        """In one transaction: move `consumer` from `expected` to `to`, store the
        deliveries not stored before (by event, subscription and type), and submit
        `delivery_job(id)` for each new one. False, with nothing written, if the
        consumer was no longer at `expected`."""


class WebhookStore(Protocol):
    """Webhook subscriptions, the tenants' signing secrets, and deliveries."""

    async def create_subscription(self, new: NewSubscription, now: int) -> WebhookSubscription:
        """Store a new subscription, enabled."""

    async def list_subscriptions(
        self, tenant: str | None, *, enabled_only: bool
    ) -> list[WebhookSubscription]:
        """The subscriptions of `tenant` (every tenant's if None), oldest first."""

    async def get_subscription(
        self, subscription_id: int, tenant: str | None
    ) -> WebhookSubscription | None:
        """One subscription of `tenant`'s (any tenant's if None), or None."""

    async def delete_subscription(self, subscription_id: int, tenant: str | None) -> bool:
        """Delete a subscription; False if `tenant` had none by that id."""

    async def rotate_subscription_secret(
        self, subscription_id: int, tenant: str | None, secret: str, grace_until: int, now: int
    ) -> WebhookSubscription | None:
        """Sign with `secret` from now on, and with the old one too until `grace_until`."""

    async def signing_secret(
        self, tenant: str, fresh: str | None, now: int
    ) -> SigningSecret | None:
        """The tenant's job-webhook secret; made from `fresh` if missing (None: don't make)."""

    async def rotate_signing_secret(
        self, tenant: str, secret: str, grace_until: int, now: int
    ) -> SigningSecret:
        """Replace the tenant's job-webhook secret, keeping the old one until `grace_until`."""

    async def get_delivery(self, delivery_id: int, tenant: str | None) -> WebhookDelivery | None:
        """One delivery concerning `tenant`'s jobs (any tenant's if None), or None."""

    async def outgoing_delivery(self, delivery_id: int) -> OutgoingDelivery | None:
        """A delivery with its subscription or its tenant's secret (one read), or None."""

    async def list_deliveries(self, job_id: int, tenant: str | None) -> list[WebhookDelivery]:
        """The deliveries of one job's events, oldest first."""

    async def delivery_attempts(self, delivery_id: int) -> list[DeliveryAttempt]:
        """Every recorded POST of one delivery, in order."""

    async def record_delivery_attempt(
        self, report: DeliveryAttempt, state: str, outcome: SubscriptionOutcome | None = None
    ) -> DeliveryAttempt:
        """Store one POST as the delivery's next attempt (numbered here) and its new state;
        with `outcome`, count it for the delivery's subscription in the same transaction."""

    async def redeliver(
        self,
        delivery_id: int,
        tenant: str | None,
        delivery_job: Callable[[int], NewJob],
        now: int,
    ) -> WebhookDelivery | None:
        """Send a delivery again by a new `delivery_job`; None if `tenant` has no such one."""


class FeedStore(EventFeed, WebhookStore, Protocol):
    """Both: what event streams, the webhook dispatcher and the delivery task use."""
