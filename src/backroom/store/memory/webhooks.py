"""Webhook subscriptions, signing secrets and deliveries in memory (see the SQL stores)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from backroom.core.job import NewJob, SubmitResult
from backroom.core.webhooks import (
    DeliveryAttempt,
    NewDelivery,
    NewSubscription,
    SigningSecret,
    SubscriptionOutcome,
    WebhookDelivery,
    WebhookSubscription,
)
from backroom.store.memory.tables import WebhookTables

SubmitJobs = Callable[[Sequence[NewJob], int], Sequence[SubmitResult]]
"""The store's own submission, for the jobs that run deliveries."""


def create_subscription(
    tables: WebhookTables, new: NewSubscription, now: int
) -> WebhookSubscription:
    """Store a new subscription, enabled."""
    tables.last_subscription_id += 1
    made = WebhookSubscription(
        id=tables.last_subscription_id,
        tenant=new.tenant,
        url=new.url,
        event_types=new.event_types,
        tasks=new.tasks,
        queues=new.queues,
        enabled=True,
        disabled_reason=None,
        failure_streak=0,
        created_at=now,
        updated_at=now,
        secret=new.secret,
    )
    tables.subscriptions[made.id] = made
    return made


def get_subscription(
    tables: WebhookTables, subscription_id: int, tenant: str | None
) -> WebhookSubscription | None:
    """One subscription of `tenant`'s (any tenant's if None), or None."""
    found = tables.subscriptions.get(subscription_id)
    return found if found is not None and tenant in (None, found.tenant) else None


def record_outcome(
    tables: WebhookTables, subscription_id: int, outcome: SubscriptionOutcome, now: int
) -> None:
    """Count an attempt's success or failure; disable at the streak or with a reason."""
    found = tables.subscriptions.get(subscription_id)
    if found is None:
        return
    streak = 0 if outcome.succeeded else found.failure_streak + 1
    enabled, reason = found.enabled, found.disabled_reason
    if outcome.disable_reason is not None:
        enabled, reason = False, outcome.disable_reason
    elif not outcome.succeeded and streak >= outcome.disable_after and found.enabled:
        enabled, reason = False, outcome.streak_reason
    tables.subscriptions[subscription_id] = dataclasses.replace(
        found, failure_streak=streak, enabled=enabled, disabled_reason=reason, updated_at=now
    )


def add_deliveries(
    tables: WebhookTables,
    deliveries: Sequence[NewDelivery],
    delivery_job: Callable[[int], NewJob],
    submit: SubmitJobs,
    now: int,
) -> list[int]:
    """Store the deliveries not stored before, each with the job that sends it."""
    added: list[int] = []
    for new in deliveries:
        key = (new.event_id, new.subscription_id, new.event_type)
        if key in tables.delivery_keys:
            continue
        tables.delivery_keys.add(key)
        tables.last_delivery_id += 1
        tables.deliveries[tables.last_delivery_id] = WebhookDelivery(
            id=tables.last_delivery_id,
            tenant=new.tenant,
            job_id=new.job_id,
            subscription_id=new.subscription_id,
            event_id=new.event_id,
            event_type=new.event_type,
            url=new.url,
            message_id=new.message_id,
            payload=new.payload,
            delivery_job_id=None,
            state="pending",
            attempts=0,
            last_status=None,
            last_latency_ms=None,
            last_error=None,
            created_at=now,
            updated_at=now,
        )
        added.append(tables.last_delivery_id)
    results = submit([delivery_job(delivery_id) for delivery_id in added], now)
    for delivery_id, result in zip(added, results, strict=True):
        restart(tables, delivery_id, result.job.id, now, state="pending")
    return added


def restart(tables: WebhookTables, delivery_id: int, job_id: int, now: int, state: str) -> None:
    """Point a delivery at the job that sends it."""
    tables.deliveries[delivery_id] = dataclasses.replace(
        tables.deliveries[delivery_id], delivery_job_id=job_id, state=state, updated_at=now
    )


def record_attempt(tables: WebhookTables, report: DeliveryAttempt, state: str) -> DeliveryAttempt:
    """Store one POST as the delivery's next attempt, and the delivery's state after it."""
    found = tables.deliveries.get(report.delivery_id)
    if found is None:
        return report
    number = found.attempts + 1
    tables.deliveries[found.id] = dataclasses.replace(
        found,
        state=state,
        attempts=number,
        last_status=report.status,
        last_latency_ms=report.latency_ms,
        last_error=report.error,
        updated_at=report.at,
    )
    recorded = dataclasses.replace(report, number=number)
    tables.attempts.setdefault(found.id, []).append(recorded)
    return recorded


def signing_secret(tables: WebhookTables, tenant: str, fresh: str | None) -> SigningSecret | None:
    """The tenant's job-webhook secret; made from `fresh` if missing (None: don't make)."""
    if tenant not in tables.secrets and fresh is not None:
        tables.secrets[tenant] = SigningSecret(tenant, fresh)
    return tables.secrets.get(tenant)


def rotate_signing_secret(
    tables: WebhookTables, tenant: str, secret: str, grace_until: int
) -> SigningSecret:
    """Replace the tenant's job-webhook secret, keeping the old one until `grace_until`."""
    old = tables.secrets.get(tenant)
    rotated = SigningSecret(
        tenant, secret, None if old is None else old.secret, None if old is None else grace_until
    )
    tables.secrets[tenant] = rotated
    return rotated
