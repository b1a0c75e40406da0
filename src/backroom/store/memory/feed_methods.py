"""The memory store's event feed and webhook methods: its `MemoryFeed` part."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Collection, Sequence

from backroom.core.feed import FeedFilter, FeedPage, FeedPosition
from backroom.core.job import Job, NewJob
from backroom.core.webhooks import (
    JOB_WEBHOOK,
    DeliveryAttempt,
    NewDelivery,
    NewSubscription,
    OutgoingDelivery,
    SigningSecret,
    SubscriptionOutcome,
    WebhookDelivery,
    WebhookSubscription,
)
from backroom.store.memory import feed
from backroom.store.memory import jobs as job_memory
from backroom.store.memory import webhooks as webhook_memory
from backroom.store.memory.part import MemoryPart
from backroom.store.rows import job_from_row


class MemoryFeed(MemoryPart):
    """Event feed, subscriptions and deliveries (see `EventFeed` and `WebhookStore`)."""

    def on_feed_change(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the event loop whenever events may have been added."""

        def soon() -> None:
            asyncio.get_running_loop().call_soon(callback)

        self._tables.feed_listeners.append(soon)

    async def read_feed(self, after: FeedPosition, where: FeedFilter, limit: int) -> FeedPage:
        """Up to `limit` events after `after` that `where` lets through."""
        return feed.read_feed(self._tables, after, where, limit)

    async def feed_jobs(self, job_ids: Collection[int]) -> dict[int, Job]:
        """The jobs of `job_ids` that still exist, by id."""
        rows = (self._tables.jobs.get(job_id) for job_id in job_ids)
        return {row.id: job_from_row(row) for row in rows if row is not None}

    async def feed_head(self) -> FeedPosition:
        """The position of the newest event."""
        return feed.feed_head(self._tables)

    async def feed_consumer(self, consumer: str, now: int) -> FeedPosition:
        """Where the durable reader `consumer` is (a new one starts at the head)."""
        return feed.consumer_position(self._tables, consumer)

    async def dispatch_deliveries(
        self,
        consumer: str,
        expected: FeedPosition,
        to: FeedPosition,
        deliveries: Sequence[NewDelivery],
        delivery_job: Callable[[int], NewJob],
        now: int,
    ) -> bool:
        """Move `consumer` from `expected` to `to` and store `deliveries`, or do neither."""
        if not feed.move_consumer(self._tables, consumer, expected, to):
            return False
        added = webhook_memory.add_deliveries(
            self._tables.webhooks,
            deliveries,
            delivery_job,
            lambda jobs, at: job_memory.store_submissions(self._tables, jobs, at),
            now,
        )
        if added:
            self._new_work.announce()
        return True

    async def create_subscription(self, new: NewSubscription, now: int) -> WebhookSubscription:
        """Store a new webhook subscription."""
        return webhook_memory.create_subscription(self._tables.webhooks, new, now)

    async def list_subscriptions(
        self, tenant: str | None, *, enabled_only: bool
    ) -> list[WebhookSubscription]:
        """The subscriptions of `tenant` (every tenant's if None), oldest first."""
        return [
            found
            for found in self._tables.webhooks.subscriptions.values()
            if tenant in (None, found.tenant) and (found.enabled or not enabled_only)
        ]

    async def get_subscription(
        self, subscription_id: int, tenant: str | None
    ) -> WebhookSubscription | None:
        """One subscription of `tenant`'s (any tenant's if None), or None."""
        return webhook_memory.get_subscription(self._tables.webhooks, subscription_id, tenant)

    async def delete_subscription(self, subscription_id: int, tenant: str | None) -> bool:
        """Delete a subscription; False if `tenant` had none by that id."""
        if webhook_memory.get_subscription(self._tables.webhooks, subscription_id, tenant):
            del self._tables.webhooks.subscriptions[subscription_id]
            return True
        return False

    async def rotate_subscription_secret(
        self, subscription_id: int, tenant: str | None, secret: str, grace_until: int, now: int
    ) -> WebhookSubscription | None:
        """Sign with `secret` from now on, and with the old one until `grace_until`."""
        found = webhook_memory.get_subscription(self._tables.webhooks, subscription_id, tenant)
        if found is None:
            return None
        rotated = dataclasses.replace(
            found,
            secret=secret,
            previous_secret=found.secret,
            previous_secret_until=grace_until,
            updated_at=now,
        )
        self._tables.webhooks.subscriptions[subscription_id] = rotated
        return rotated

    async def signing_secret(
        self, tenant: str, fresh: str | None, now: int
    ) -> SigningSecret | None:
        """The tenant's job-webhook secret; made from `fresh` if missing (None: don't make)."""
        return webhook_memory.signing_secret(self._tables.webhooks, tenant, fresh)

    async def rotate_signing_secret(
        self, tenant: str, secret: str, grace_until: int, now: int
    ) -> SigningSecret:
        """Replace the tenant's job-webhook secret, keeping the old one until `grace_until`."""
        return webhook_memory.rotate_signing_secret(
            self._tables.webhooks, tenant, secret, grace_until
        )

    async def get_delivery(self, delivery_id: int, tenant: str | None) -> WebhookDelivery | None:
        """One delivery of `tenant`'s jobs (any tenant's if None), or None."""
        found = self._tables.webhooks.deliveries.get(delivery_id)
        return found if found is not None and tenant in (None, found.tenant) else None

    async def list_deliveries(self, job_id: int, tenant: str | None) -> list[WebhookDelivery]:
        """The deliveries of one job's events, oldest first."""
        return [
            found
            for found in self._tables.webhooks.deliveries.values()
            if found.job_id == job_id and tenant in (None, found.tenant)
        ]

    async def delivery_attempts(self, delivery_id: int) -> list[DeliveryAttempt]:
        """Every recorded POST of one delivery."""
        return list(self._tables.webhooks.attempts.get(delivery_id, []))

    async def outgoing_delivery(self, delivery_id: int) -> OutgoingDelivery | None:
        """A delivery with its subscription or its tenant's secret, or None."""
        webhooks = self._tables.webhooks
        found = webhooks.deliveries.get(delivery_id)
        if found is None:
            return None
        if found.subscription_id == JOB_WEBHOOK:
            return OutgoingDelivery(found, secret=webhooks.secrets.get(found.tenant))
        return OutgoingDelivery(found, webhooks.subscriptions.get(found.subscription_id))

    async def record_delivery_attempt(
        self, report: DeliveryAttempt, state: str, outcome: SubscriptionOutcome | None = None
    ) -> DeliveryAttempt:
        """Store one POST of a delivery as its next attempt, numbered; with `outcome`,
        count it for the delivery's subscription."""
        webhooks = self._tables.webhooks
        recorded = webhook_memory.record_attempt(webhooks, report, state)
        found = webhooks.deliveries.get(report.delivery_id)
        if outcome is not None and found is not None:
            webhook_memory.record_outcome(webhooks, found.subscription_id, outcome, report.at)
        return recorded

    async def redeliver(
        self,
        delivery_id: int,
        tenant: str | None,
        delivery_job: Callable[[int], NewJob],
        now: int,
    ) -> WebhookDelivery | None:
        """Send a delivery again by a new job; None if `tenant` has no such delivery."""
        if await self.get_delivery(delivery_id, tenant) is None:
            return None
        (submitted,) = job_memory.store_submissions(self._tables, [delivery_job(delivery_id)], now)
        webhook_memory.restart(self._tables.webhooks, delivery_id, submitted.job.id, now, "pending")
        self._new_work.announce()
        return await self.get_delivery(delivery_id, tenant)
