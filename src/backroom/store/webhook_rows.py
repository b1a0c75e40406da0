"""Webhook subscriptions, secrets and deliveries as table rows, shared by the SQL backends."""

from __future__ import annotations

from backroom.core.webhooks import SigningSecret, WebhookDelivery, WebhookSubscription
from backroom.store.rows import Row, load_json


def _strings(text: str) -> tuple[str, ...]:
    value = load_json(text)
    return tuple(str(item) for item in value) if isinstance(value, list) else ()


def subscription_from_row(row: Row) -> WebhookSubscription:
    """The `WebhookSubscription` a row of webhook_subscriptions holds."""
    return WebhookSubscription(
        id=row["id"],
        tenant=row["tenant"],
        url=row["url"],
        event_types=_strings(row["event_types"]),
        tasks=_strings(row["tasks"]),
        queues=_strings(row["queues"]),
        enabled=bool(row["enabled"]),
        disabled_reason=row["disabled_reason"],
        failure_streak=row["failure_streak"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        secret=row["secret"],
        previous_secret=row["previous_secret"],
        previous_secret_until=row["previous_secret_until"],
    )


def secret_from_row(row: Row) -> SigningSecret:
    """The `SigningSecret` a row of webhook_signing_secrets holds."""
    return SigningSecret(
        tenant=row["tenant"],
        secret=row["secret"],
        previous_secret=row["previous_secret"],
        previous_secret_until=row["previous_secret_until"],
    )


def delivery_from_row(row: Row) -> WebhookDelivery:
    """The `WebhookDelivery` a row of webhook_deliveries holds."""
    return WebhookDelivery(
        id=row["id"],
        tenant=row["tenant"],
        job_id=row["job_id"],
        subscription_id=row["subscription_id"],
        event_id=row["event_id"],
        event_type=row["event_type"],
        url=row["url"],
        message_id=row["message_id"],
        payload=row["payload"],
        delivery_job_id=row["delivery_job_id"],
        state=row["state"],
        attempts=row["attempts"],
        last_status=row["last_status"],
        last_latency_ms=row["last_latency_ms"],
        last_error=row["last_error"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )
