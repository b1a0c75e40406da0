"""Webhook subscriptions and the tenants' signing secrets on SQLite."""

from __future__ import annotations

import sqlite3

from backroom.core.webhooks import (
    NewSubscription,
    SigningSecret,
    SubscriptionOutcome,
    WebhookSubscription,
)
from backroom.store.rows import dump_json
from backroom.store.webhook_rows import secret_from_row, subscription_from_row

_INSERT_SUBSCRIPTION = """
INSERT INTO webhook_subscriptions (tenant, url, event_types, tasks, queues, secret,
                                   created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
RETURNING *
"""

_ROTATE_SUBSCRIPTION = """
UPDATE webhook_subscriptions
SET previous_secret = secret, previous_secret_until = ?, secret = ?, updated_at = ?
WHERE id = ? AND (? IS NULL OR tenant = ?)
RETURNING *
"""

# A success ends a streak; a failure lengthens it and, at `disable_after`, disables.
_RECORD_OUTCOME = """
UPDATE webhook_subscriptions
SET failure_streak = CASE WHEN :succeeded THEN 0 ELSE failure_streak + 1 END,
    enabled = CASE WHEN :disable THEN 0
                   WHEN NOT :succeeded AND failure_streak + 1 >= :disable_after THEN 0
                   ELSE enabled END,
    disabled_reason = CASE
        WHEN :disable THEN :reason
        WHEN NOT :succeeded AND failure_streak + 1 >= :disable_after AND enabled
            THEN :streak_reason
        ELSE disabled_reason END,
    updated_at = :now
WHERE id = :id
"""

_ADD_SIGNER = """
INSERT INTO webhook_signing_secrets (tenant, secret, created_at) VALUES (?, ?, ?)
ON CONFLICT (tenant) DO NOTHING
"""

_ROTATE_SIGNER = """
INSERT INTO webhook_signing_secrets (tenant, secret, created_at) VALUES (:tenant, :secret, :now)
ON CONFLICT (tenant) DO UPDATE
SET previous_secret = secret, previous_secret_until = :grace_until, secret = :secret
"""


def create_subscription(
    connection: sqlite3.Connection, new: NewSubscription, now: int
) -> WebhookSubscription:
    """Store a new subscription, enabled."""
    row = connection.execute(
        _INSERT_SUBSCRIPTION,
        (
            new.tenant,
            new.url,
            dump_json(list(new.event_types)),
            dump_json(list(new.tasks)),
            dump_json(list(new.queues)),
            new.secret,
            now,
            now,
        ),
    ).fetchone()
    return subscription_from_row(row)


def list_subscriptions(
    connection: sqlite3.Connection, tenant: str | None, enabled_only: bool
) -> list[WebhookSubscription]:
    """The subscriptions of `tenant` (every tenant's if None), oldest first."""
    rows = connection.execute(
        "SELECT * FROM webhook_subscriptions WHERE (? IS NULL OR tenant = ?) "
        "AND (NOT ? OR enabled) ORDER BY id",
        (tenant, tenant, enabled_only),
    )
    return [subscription_from_row(row) for row in rows]


def get_subscription(
    connection: sqlite3.Connection, subscription_id: int, tenant: str | None
) -> WebhookSubscription | None:
    """One subscription, if it exists and belongs to `tenant` (any tenant if None)."""
    row = connection.execute(
        "SELECT * FROM webhook_subscriptions WHERE id = ? AND (? IS NULL OR tenant = ?)",
        (subscription_id, tenant, tenant),
    ).fetchone()
    return None if row is None else subscription_from_row(row)


def delete_subscription(
    connection: sqlite3.Connection, subscription_id: int, tenant: str | None
) -> bool:
    """Delete a subscription; False if there was none of `tenant`'s by that id."""
    deleted = connection.execute(
        "DELETE FROM webhook_subscriptions WHERE id = ? AND (? IS NULL OR tenant = ?)",
        (subscription_id, tenant, tenant),
    )
    return deleted.rowcount == 1


def rotate_subscription_secret(
    connection: sqlite3.Connection,
    subscription_id: int,
    tenant: str | None,
    secret: str,
    grace_until: int,
    now: int,
) -> WebhookSubscription | None:
    """Sign with `secret` from now on, and with the old one too until `grace_until`."""
    row = connection.execute(
        _ROTATE_SUBSCRIPTION, (grace_until, secret, now, subscription_id, tenant, tenant)
    ).fetchone()
    return None if row is None else subscription_from_row(row)


def record_subscription_outcome(
    connection: sqlite3.Connection, subscription_id: int, outcome: SubscriptionOutcome, now: int
) -> None:
    """Count a delivery's success or failure; disable at the streak or with a reason."""
    connection.execute(
        _RECORD_OUTCOME,
        {
            "succeeded": outcome.succeeded,
            "disable": outcome.disable_reason is not None,
            "reason": outcome.disable_reason,
            "disable_after": outcome.disable_after,
            "streak_reason": outcome.streak_reason,
            "now": now,
            "id": subscription_id,
        },
    )


def signing_secret(
    connection: sqlite3.Connection, tenant: str, fresh: str, now: int
) -> SigningSecret:
    """The tenant's job-webhook secret, made from `fresh` if it has none yet."""
    connection.execute(_ADD_SIGNER, (tenant, fresh, now))
    row = connection.execute(
        "SELECT * FROM webhook_signing_secrets WHERE tenant = ?", (tenant,)
    ).fetchone()
    return secret_from_row(row)


def find_signing_secret(connection: sqlite3.Connection, tenant: str) -> SigningSecret | None:
    """The tenant's job-webhook secret, or None if it has none."""
    row = connection.execute(
        "SELECT * FROM webhook_signing_secrets WHERE tenant = ?", (tenant,)
    ).fetchone()
    return None if row is None else secret_from_row(row)


def rotate_signing_secret(
    connection: sqlite3.Connection, tenant: str, secret: str, grace_until: int, now: int
) -> SigningSecret:
    """Replace the tenant's job-webhook secret, keeping the old one until `grace_until`."""
    connection.execute(
        _ROTATE_SIGNER,
        {"tenant": tenant, "secret": secret, "now": now, "grace_until": grace_until},
    )
    return signing_secret(connection, tenant, secret, now)
