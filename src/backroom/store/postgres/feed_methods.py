"""The PostgreSQL store's event feed and webhook methods: its `PostgresFeed` part.

Every process's writes wake every reader: a statement trigger on job_events sends a
NOTIFY on `backroom_feed` (migration 005), heard on a LISTEN connection opened when the
first reader registers.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from backroom.core.feed import FeedFilter, FeedPage, FeedPosition
from backroom.core.job import Job, NewJob, SubmitResult
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
from backroom.store.postgres import deliveries as delivery_sql
from backroom.store.postgres import feed
from backroom.store.postgres import subscriptions as subscription_sql
from backroom.store.postgres.database import PooledConnection
from backroom.store.postgres.part import PostgresPart
from backroom.store.postgres.submit import submit_jobs
from backroom.store.rows import job_from_row

FEED_CHANNEL = "backroom_feed"
"""The channel the job_events trigger notifies."""


class PostgresFeed(PostgresPart):
    """Event feed, subscriptions and deliveries (see `EventFeed` and `WebhookStore`)."""

    def on_feed_change(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the event loop whenever any process may have added events
        (never, where LISTEN cannot work: readers then poll). It listens on the store's
        LISTEN connection, beside the new-work channel."""
        self._listener.add(callback, FEED_CHANNEL)

    async def _submit(
        self, connection: PooledConnection, jobs: Sequence[NewJob], now: int
    ) -> Sequence[SubmitResult]:
        return await submit_jobs(connection, jobs, now, self._channel)

    async def read_feed(self, after: FeedPosition, where: FeedFilter, limit: int) -> FeedPage:
        """Up to `limit` events after `after` that `where` lets through."""
        async with self._database.connection() as connection:
            return await feed.read_feed(connection, after, where, limit)

    async def feed_jobs(self, job_ids: Collection[int]) -> dict[int, Job]:
        """The jobs of `job_ids` that still exist, by id (one statement)."""
        if not job_ids:
            return {}
        async with self._database.connection() as connection:
            rows = await connection.fetch(
                "SELECT * FROM jobs WHERE id = ANY ($1::bigint[])", list(job_ids)
            )
        return {row["id"]: job_from_row(row) for row in rows}

    async def feed_head(self) -> FeedPosition:
        """The position of the newest readable event."""
        async with self._database.connection() as connection:
            return await feed.feed_head(connection)

    async def feed_consumer(self, consumer: str, now: int) -> FeedPosition:
        """Where the durable reader `consumer` is (a new one starts at the head)."""
        async with self._database.connection() as connection:
            return await feed.consumer_position(connection, consumer, now)

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
        if not deliveries:  # one statement: no transaction around it
            async with self._database.connection() as connection:
                return await feed.move_consumer(
                    connection, consumer, expected, to, now, lazily=True
                )
        async with self._database.connection() as connection, connection.transaction():
            if not await feed.move_consumer(connection, consumer, expected, to, now):
                return False
            await delivery_sql.add_deliveries(
                connection, deliveries, delivery_job, self._submit, now
            )
            return True

    async def create_subscription(self, new: NewSubscription, now: int) -> WebhookSubscription:
        """Store a new webhook subscription."""
        async with self._database.connection() as connection:
            return await subscription_sql.create_subscription(connection, new, now)

    async def list_subscriptions(
        self, tenant: str | None, *, enabled_only: bool
    ) -> list[WebhookSubscription]:
        """The subscriptions of `tenant` (every tenant's if None)."""
        async with self._database.connection() as connection:
            return await subscription_sql.list_subscriptions(connection, tenant, enabled_only)

    async def get_subscription(
        self, subscription_id: int, tenant: str | None
    ) -> WebhookSubscription | None:
        """One subscription of `tenant`'s (any tenant's if None), or None."""
        async with self._database.connection() as connection:
            return await subscription_sql.get_subscription(connection, subscription_id, tenant)

    async def delete_subscription(self, subscription_id: int, tenant: str | None) -> bool:
        """Delete a subscription; False if `tenant` had none by that id."""
        async with self._database.connection() as connection:
            return await subscription_sql.delete_subscription(connection, subscription_id, tenant)

    async def rotate_subscription_secret(
        self, subscription_id: int, tenant: str | None, secret: str, grace_until: int, now: int
    ) -> WebhookSubscription | None:
        """Sign with `secret` from now on, and with the old one until `grace_until`."""
        async with self._database.connection() as connection:
            return await subscription_sql.rotate_subscription_secret(
                connection, subscription_id, tenant, secret, grace_until, now
            )

    async def signing_secret(
        self, tenant: str, fresh: str | None, now: int
    ) -> SigningSecret | None:
        """The tenant's job-webhook secret; made from `fresh` if missing (None: don't make)."""
        async with self._database.connection() as connection:
            if fresh is None:
                return await subscription_sql.find_signing_secret(connection, tenant)
            return await subscription_sql.signing_secret(connection, tenant, fresh, now)

    async def rotate_signing_secret(
        self, tenant: str, secret: str, grace_until: int, now: int
    ) -> SigningSecret:
        """Replace the tenant's job-webhook secret, keeping the old one until `grace_until`."""
        async with self._database.connection() as connection:
            return await subscription_sql.rotate_signing_secret(
                connection, tenant, secret, grace_until, now
            )

    async def get_delivery(self, delivery_id: int, tenant: str | None) -> WebhookDelivery | None:
        """One delivery of `tenant`'s jobs (any tenant's if None), or None."""
        async with self._database.connection() as connection:
            return await delivery_sql.get_delivery(connection, delivery_id, tenant)

    async def list_deliveries(self, job_id: int, tenant: str | None) -> list[WebhookDelivery]:
        """The deliveries of one job's events."""
        async with self._database.connection() as connection:
            return await delivery_sql.list_deliveries(connection, job_id, tenant)

    async def delivery_attempts(self, delivery_id: int) -> list[DeliveryAttempt]:
        """Every recorded POST of one delivery."""
        async with self._database.connection() as connection:
            return await delivery_sql.delivery_attempts(connection, delivery_id)

    async def outgoing_delivery(self, delivery_id: int) -> OutgoingDelivery | None:
        """A delivery with its subscription or its tenant's secret (one statement), or None."""
        async with self._database.connection() as connection:
            return await delivery_sql.outgoing_delivery(connection, delivery_id)

    async def record_delivery_attempt(
        self, report: DeliveryAttempt, state: str, outcome: SubscriptionOutcome | None = None
    ) -> DeliveryAttempt:
        """Store one POST of a delivery as its next attempt, numbered; with `outcome`,
        count it for the delivery's subscription (one statement)."""
        async with self._database.connection() as connection:
            return await delivery_sql.record_delivery_attempt(connection, report, state, outcome)

    async def redeliver(
        self,
        delivery_id: int,
        tenant: str | None,
        delivery_job: Callable[[int], NewJob],
        now: int,
    ) -> WebhookDelivery | None:
        """Send a delivery again by a new job; None if `tenant` has no such delivery."""
        async with self._database.connection() as connection, connection.transaction():
            if await delivery_sql.get_delivery(connection, delivery_id, tenant) is None:
                return None
            (submitted,) = await self._submit(connection, [delivery_job(delivery_id)], now)
            await delivery_sql.restart_delivery(connection, delivery_id, submitted.job.id, now)
            return await delivery_sql.get_delivery(connection, delivery_id, tenant)
