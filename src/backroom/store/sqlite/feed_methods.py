"""The SQLite store's event feed and webhook methods: its `SqliteFeed` part.

Readers in this process are woken after every commit; readers in other processes find
new events at their next poll.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence

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
from backroom.store.rows import dump_json, job_from_row
from backroom.store.sqlite import deliveries as delivery_sql
from backroom.store.sqlite import feed
from backroom.store.sqlite import subscriptions as subscription_sql
from backroom.store.sqlite.jobs import store_submissions
from backroom.store.sqlite.part import SqlitePart


class SqliteFeed(SqlitePart):
    """Event feed, subscriptions and deliveries (see `EventFeed` and `WebhookStore`)."""

    def on_feed_change(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the event loop whenever this process may have added events."""
        self._database.on_commit(callback)

    async def read_feed(self, after: FeedPosition, where: FeedFilter, limit: int) -> FeedPage:
        """Up to `limit` events after `after` that `where` lets through."""
        return await self._database.read(
            lambda connection: feed.read_feed(connection, after, where, limit)
        )

    async def feed_jobs(self, job_ids: Collection[int]) -> dict[int, Job]:
        """The jobs of `job_ids` that still exist, by id (one read)."""
        if not job_ids:
            return {}
        wanted = dump_json(list(job_ids))

        def read(connection: sqlite3.Connection) -> dict[int, Job]:
            rows = connection.execute(
                "SELECT * FROM jobs WHERE id IN (SELECT value FROM json_each(?))", (wanted,)
            )
            return {row["id"]: job_from_row(row) for row in rows}

        return await self._database.read(read)

    async def feed_head(self) -> FeedPosition:
        """The position of the newest event."""
        return await self._database.read(feed.feed_head)

    async def feed_consumer(self, consumer: str, now: int) -> FeedPosition:
        """Where the durable reader `consumer` is (a new one starts at the head)."""
        return await self._database.write(
            lambda connection: feed.consumer_position(connection, consumer, now)
        )

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

        def dispatch(connection: sqlite3.Connection) -> bool:
            if not feed.move_consumer(connection, consumer, expected, to, now):
                return False
            delivery_sql.add_deliveries(
                connection, deliveries, delivery_job, store_submissions, now
            )
            return True

        moved = await self._database.write(dispatch)
        if moved and deliveries:
            self._new_work.announce()
        return moved

    async def create_subscription(self, new: NewSubscription, now: int) -> WebhookSubscription:
        """Store a new webhook subscription."""
        return await self._database.write(
            lambda connection: subscription_sql.create_subscription(connection, new, now)
        )

    async def list_subscriptions(
        self, tenant: str | None, *, enabled_only: bool
    ) -> list[WebhookSubscription]:
        """The subscriptions of `tenant` (every tenant's if None)."""
        return await self._database.read(
            lambda connection: subscription_sql.list_subscriptions(connection, tenant, enabled_only)
        )

    async def get_subscription(
        self, subscription_id: int, tenant: str | None
    ) -> WebhookSubscription | None:
        """One subscription of `tenant`'s (any tenant's if None), or None."""
        return await self._database.read(
            lambda connection: subscription_sql.get_subscription(
                connection, subscription_id, tenant
            )
        )

    async def delete_subscription(self, subscription_id: int, tenant: str | None) -> bool:
        """Delete a subscription; False if `tenant` had none by that id."""
        return await self._database.write(
            lambda connection: subscription_sql.delete_subscription(
                connection, subscription_id, tenant
            )
        )

    async def rotate_subscription_secret(
        self, subscription_id: int, tenant: str | None, secret: str, grace_until: int, now: int
    ) -> WebhookSubscription | None:
        """Sign with `secret` from now on, and with the old one until `grace_until`."""
        return await self._database.write(
            lambda connection: subscription_sql.rotate_subscription_secret(
                connection, subscription_id, tenant, secret, grace_until, now
            )
        )

    async def signing_secret(
        self, tenant: str, fresh: str | None, now: int
    ) -> SigningSecret | None:
        """The tenant's job-webhook secret; made from `fresh` if missing (None: don't make)."""
        if fresh is None:
            return await self._database.read(
                lambda connection: subscription_sql.find_signing_secret(connection, tenant)
            )
        return await self._database.write(
            lambda connection: subscription_sql.signing_secret(connection, tenant, fresh, now)
        )

    async def rotate_signing_secret(
        self, tenant: str, secret: str, grace_until: int, now: int
    ) -> SigningSecret:
        """Replace the tenant's job-webhook secret, keeping the old one until `grace_until`."""
        return await self._database.write(
            lambda connection: subscription_sql.rotate_signing_secret(
                connection, tenant, secret, grace_until, now
            )
        )

    async def get_delivery(self, delivery_id: int, tenant: str | None) -> WebhookDelivery | None:
        """One delivery of `tenant`'s jobs (any tenant's if None), or None."""
        return await self._database.read(
            lambda connection: delivery_sql.get_delivery(connection, delivery_id, tenant)
        )

    async def list_deliveries(self, job_id: int, tenant: str | None) -> list[WebhookDelivery]:
        """The deliveries of one job's events."""
        return await self._database.read(
            lambda connection: delivery_sql.list_deliveries(connection, job_id, tenant)
        )

    async def delivery_attempts(self, delivery_id: int) -> list[DeliveryAttempt]:
        """Every recorded POST of one delivery."""
        return await self._database.read(
            lambda connection: delivery_sql.delivery_attempts(connection, delivery_id)
        )

    async def outgoing_delivery(self, delivery_id: int) -> OutgoingDelivery | None:
        """A delivery with its subscription or its tenant's secret, or None."""
        return await self._database.read(
            lambda connection: delivery_sql.outgoing_delivery(connection, delivery_id)
        )

    async def record_delivery_attempt(
        self, report: DeliveryAttempt, state: str, outcome: SubscriptionOutcome | None = None
    ) -> DeliveryAttempt:
        """Store one POST of a delivery as its next attempt, numbered; with `outcome`,
        count it for the delivery's subscription, in one transaction."""
        return await self._database.write(
            lambda connection: delivery_sql.record_delivery_attempt(
                connection, report, state, outcome
            )
        )

    async def redeliver(
        self,
        delivery_id: int,
        tenant: str | None,
        delivery_job: Callable[[int], NewJob],
        now: int,
    ) -> WebhookDelivery | None:
        """Send a delivery again by a new job; None if `tenant` has no such delivery."""

        def again(connection: sqlite3.Connection) -> WebhookDelivery | None:
            if delivery_sql.get_delivery(connection, delivery_id, tenant) is None:
                return None
            (submitted,) = store_submissions(connection, [delivery_job(delivery_id)], now)
            delivery_sql.restart_delivery(connection, delivery_id, submitted.job.id, now)
            return delivery_sql.get_delivery(connection, delivery_id, tenant)

        delivery = await self._database.write(again)
        if delivery is not None:
            self._new_work.announce()
        return delivery
