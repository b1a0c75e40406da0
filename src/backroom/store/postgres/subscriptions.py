"""Webhook subscriptions and the tenants' signing secrets on PostgreSQL."""

from __future__ import annotations

from backroom.core.webhooks import (
    NewSubscription,
    SigningSecret,
    WebhookSubscription,
)
from backroom.store.postgres.database import PooledConnection as Connection
from backroom.store.rows import dump_json
from backroom.store.webhook_rows import secret_from_row, subscription_from_row


async def create_subscription(
    connection: Connection, new: NewSubscription, now: int
) -> WebhookSubscription:
    """Store a new subscription, enabled."""
    row = await connection.fetchrow(
        "INSERT INTO webhook_subscriptions (tenant, url, event_types, tasks, queues, secret, "
        "created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING *",
        new.tenant,
        new.url,
        dump_json(list(new.event_types)),
        dump_json(list(new.tasks)),
        dump_json(list(new.queues)),
        new.secret,
        now,
    )
    assert row is not None  # INSERT ... RETURNING always yields the row
    return subscription_from_row(row)


async def list_subscriptions(
    connection: Connection, tenant: str | None, enabled_only: bool
) -> list[WebhookSubscription]:
    """The subscriptions of `tenant` (every tenant's if None), oldest first."""
    rows = await connection.fetch(
        "SELECT * FROM webhook_subscriptions WHERE ($1::text IS NULL OR tenant = $1) "
        "AND (NOT $2 OR enabled) ORDER BY id",
        tenant,
        enabled_only,
    )
    return [subscription_from_row(row) for row in rows]


async def get_subscription(
    connection: Connection, subscription_id: int, tenant: str | None
) -> WebhookSubscription | None:
    """One subscription, if it exists and belongs to `tenant` (any tenant if None)."""
    row = await connection.fetchrow(
        "SELECT * FROM webhook_subscriptions WHERE id = $1 AND ($2::text IS NULL OR tenant = $2)",
        subscription_id,
        tenant,
    )
    return None if row is None else subscription_from_row(row)


async def delete_subscription(
    connection: Connection, subscription_id: int, tenant: str | None
) -> bool:
    """Delete a subscription; False if there was none of `tenant`'s by that id."""
    status = await connection.execute(
        "DELETE FROM webhook_subscriptions WHERE id = $1 AND ($2::text IS NULL OR tenant = $2)",
        subscription_id,
        tenant,
    )
    return status == "DELETE 1"


async def rotate_subscription_secret(
    connection: Connection,
    subscription_id: int,
    tenant: str | None,
    secret: str,
    grace_until: int,
    now: int,
) -> WebhookSubscription | None:
    """Sign with `secret` from now on, and with the old one too until `grace_until`."""
    row = await connection.fetchrow(
        "UPDATE webhook_subscriptions SET previous_secret = secret, previous_secret_until = $1, "
        "secret = $2, updated_at = $3 WHERE id = $4 AND ($5::text IS NULL OR tenant = $5) "
        "RETURNING *",
        grace_until,
        secret,
        now,
        subscription_id,
        tenant,
    )
    return None if row is None else subscription_from_row(row)


async def signing_secret(
    connection: Connection, tenant: str, fresh: str, now: int
) -> SigningSecret:
    """The tenant's job-webhook secret, made from `fresh` if it has none yet."""
    await connection.execute(
        "INSERT INTO webhook_signing_secrets (tenant, secret, created_at) VALUES ($1, $2, $3) "
        "ON CONFLICT (tenant) DO NOTHING",
        tenant,
        fresh,
        now,
    )
    row = await connection.fetchrow(
        "SELECT * FROM webhook_signing_secrets WHERE tenant = $1", tenant
    )
    assert row is not None  # inserted just above if it was missing
    return secret_from_row(row)


async def find_signing_secret(connection: Connection, tenant: str) -> SigningSecret | None:
    """The tenant's job-webhook secret, or None if it has none."""
    row = await connection.fetchrow(
        "SELECT * FROM webhook_signing_secrets WHERE tenant = $1", tenant
    )
    return None if row is None else secret_from_row(row)


async def rotate_signing_secret(
    connection: Connection, tenant: str, secret: str, grace_until: int, now: int
) -> SigningSecret:
    """Replace the tenant's job-webhook secret, keeping the old one until `grace_until`."""
    row = await connection.fetchrow(
        "INSERT INTO webhook_signing_secrets (tenant, secret, created_at) VALUES ($1, $2, $3) "
        "ON CONFLICT (tenant) DO UPDATE SET previous_secret = webhook_signing_secrets.secret, "
        "previous_secret_until = $4, secret = excluded.secret RETURNING *",
        tenant,
        secret,
        now,
        grace_until,
    )
    assert row is not None  # an upsert with RETURNING always yields the row
    return secret_from_row(row)
