"""The service's webhook operations: subscriptions, signing secrets and deliveries.

Like the rest of `backroom.service`, each takes the `App` and a `Caller` and returns a
`Reply`. A tenant sees and changes only its own subscriptions and deliveries; an admin
sees every tenant's. A secret is shown when it is made (a subscription's at creation,
either at rotation) and never again; documents show only its first characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from backroom.core.errors import WebhookTargetRefused
from backroom.core.job import JSON
from backroom.core.webhooks import (
    SUBSCRIBABLE_TYPES,
    DeliveryAttempt,
    NewSubscription,
    SigningSecret,
    WebhookDelivery,
    WebhookSubscription,
)
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.documents import iso
from backroom.service.replies import Reply, invalid_field, problem
from backroom.webhooks.dispatcher import delivery_job
from backroom.webhooks.signing import new_secret
from backroom.webhooks.targets import TargetPolicy, check_target

ROTATION_GRACE_MS = 24 * 3_600_000
"""How long the old secret still signs after a rotation."""


@dataclass(frozen=True, slots=True)
class SubscriptionRequest:
    """A subscription as a client asks for it (the body of `POST /v1/webhooks`)."""

    url: str
    event_types: Sequence[str]
    tasks: Sequence[str] = ()
    queues: Sequence[str] = ()


def subscription_document(subscription: WebhookSubscription) -> dict[str, JSON]:
    """A subscription as plain data, its secret shown only by its first characters."""
    return {
        "id": subscription.id,
        "tenant": subscription.tenant,
        "url": subscription.url,
        "event_types": list(subscription.event_types),
        "tasks": list(subscription.tasks),
        "queues": list(subscription.queues),
        "enabled": subscription.enabled,
        "disabled_reason": subscription.disabled_reason,
        "failure_streak": subscription.failure_streak,
        "secret_hint": subscription.secret[:10] + "...",
        "created_at": iso(subscription.created_at),
        "updated_at": iso(subscription.updated_at),
    }


def delivery_document(
    delivery: WebhookDelivery, attempts: Sequence[DeliveryAttempt] = ()
) -> dict[str, JSON]:
    """A delivery as plain data, with its attempts when given."""
    return {
        "id": delivery.id,
        "job_id": delivery.job_id,
        "subscription_id": delivery.subscription_id or None,
        "event_type": delivery.event_type,
        "url": delivery.url,
        "webhook_id": delivery.message_id,
        "state": delivery.state,
        "attempts": delivery.attempts,
        "last_status": delivery.last_status,
        "last_latency_ms": delivery.last_latency_ms,
        "last_error": delivery.last_error,
        "delivery_job_id": delivery.delivery_job_id,
        "created_at": iso(delivery.created_at),
        "updated_at": iso(delivery.updated_at),
        "attempt_history": [
            {
                "number": attempt.number,
                "at": iso(attempt.at),
                "status": attempt.status,
                "latency_ms": attempt.latency_ms,
                "error": attempt.error,
            }
            for attempt in attempts
        ],
    }


async def create_subscription(
    app: AppParts, caller: Caller, request: SubscriptionRequest, policy: TargetPolicy
) -> Reply:
    """Subscribe the caller's tenant; the answer shows the signing secret, once."""
    if caller.admin:
        return problem(422, "subscriptions belong to a tenant: use a tenant's key")
    unknown = sorted(set(request.event_types) - set(SUBSCRIBABLE_TYPES))
    if unknown or not request.event_types:
        choices = ", ".join(SUBSCRIBABLE_TYPES)
        return invalid_field(("body", "event_types"), f"choose from {choices}")
    try:
        await check_target(request.url, policy)
    except WebhookTargetRefused as refused:
        return invalid_field(("body", "url"), str(refused))
    new = NewSubscription(
        tenant=caller.tenant,
        url=request.url,
        event_types=tuple(dict.fromkeys(request.event_types)),
        secret=new_secret(),
        tasks=tuple(request.tasks),
        queues=tuple(request.queues),
    )
    stored = await app.store.create_subscription(new, app.clock.now())
    document = subscription_document(stored) | {"secret": stored.secret}
    return Reply(201, document, {"Location": f"/v1/webhooks/{stored.id}"})


async def list_subscriptions(app: AppParts, caller: Caller) -> Reply:
    """The caller's subscriptions (every tenant's for an admin)."""
    found = await app.store.list_subscriptions(caller.scope, enabled_only=False)
    return Reply(200, {"subscriptions": [subscription_document(item) for item in found]})


async def get_subscription(app: AppParts, caller: Caller, subscription_id: int) -> Reply:
    """One subscription, or 404."""
    found = await app.store.get_subscription(subscription_id, caller.scope)
    if found is None:
        return _no_subscription(subscription_id)
    return Reply(200, subscription_document(found))


async def delete_subscription(app: AppParts, caller: Caller, subscription_id: int) -> Reply:
    """Delete a subscription: its pending deliveries then fail without being sent."""
    if not await app.store.delete_subscription(subscription_id, caller.scope):
        return _no_subscription(subscription_id)
    return Reply(204, None)


async def rotate_subscription_secret(app: AppParts, caller: Caller, subscription_id: int) -> Reply:
    """A new secret; the old one signs too for a day, so receivers can switch over."""
    now = app.clock.now()
    rotated = await app.store.rotate_subscription_secret(
        subscription_id, caller.scope, new_secret(), now + ROTATION_GRACE_MS, now
    )
    if rotated is None:
        return _no_subscription(subscription_id)
    grace = {"secret": rotated.secret, "previous_secret_valid_until": iso(now + ROTATION_GRACE_MS)}
    return Reply(200, subscription_document(rotated) | grace)


async def signing_secret(app: AppParts, caller: Caller, *, rotate: bool) -> Reply:
    """The secret that signs deliveries to the tenant's jobs' own `webhook_url`."""
    if caller.admin:
        return problem(422, "the signing secret belongs to a tenant: use a tenant's key")
    now = app.clock.now()
    stored: SigningSecret | None
    if rotate:
        stored = await app.store.rotate_signing_secret(
            caller.tenant, new_secret(), now + ROTATION_GRACE_MS, now
        )
    else:
        stored = await app.store.signing_secret(caller.tenant, new_secret(), now)
    assert stored is not None  # made from the fresh secret when missing
    body: dict[str, JSON] = {"tenant": stored.tenant, "secret": stored.secret}
    if stored.previous_secret_until is not None and stored.previous_secret_until > now:
        body["previous_secret_valid_until"] = iso(stored.previous_secret_until)
    return Reply(200, body, {"Cache-Control": "no-store"})


async def prepare_job_webhook(app: AppParts, tenant: str, url: str, policy: TargetPolicy) -> None:
    """Check a job's `webhook_url` (raising `WebhookTargetRefused`), and make sure its
    tenant has the secret that will sign the delivery."""
    await check_target(url, policy)
    await app.store.signing_secret(tenant, new_secret(), app.clock.now())


async def list_deliveries(app: AppParts, caller: Caller, job_id: int) -> Reply:
    """The webhook deliveries of one job's events, with their attempts; 404 for no job."""
    job = await app.store.get(job_id, caller.scope)
    if job is None:
        return problem(404, f"no job {job_id}", kind="job-not-found")
    found = await app.store.list_deliveries(job_id, caller.scope)
    documents = [
        delivery_document(delivery, await app.store.delivery_attempts(delivery.id))
        for delivery in found
    ]
    return Reply(200, {"deliveries": documents})


async def redeliver(app: AppParts, caller: Caller, delivery_id: int) -> Reply:
    """Send a delivery again (same body, same `webhook-id`) by a new delivery job."""
    now = app.clock.now()
    delivery = await app.store.redeliver(
        delivery_id, caller.scope, delivery_job(now, again=True), now
    )
    if delivery is None:
        return problem(404, f"no delivery {delivery_id}", kind="delivery-not-found")
    return Reply(202, delivery_document(delivery))


def _no_subscription(subscription_id: int) -> Reply:
    return problem(404, f"no webhook subscription {subscription_id}", kind="subscription-not-found")
