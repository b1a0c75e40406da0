"""The client's webhook operations as plans (see `backroom.client.plans`): subscriptions,
the tenant's signing secret, and a job's deliveries.

They answer with the API's documents as plain data. The ones that change something are
not retried: a repeat after a lost answer would make a second subscription or secret.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from backroom.client.plans import Plan, Plans, Send

Document = dict[str, Any]
"""A JSON document of the API."""

Documents = list[Document]
"""Documents (an alias: inside the client classes, `list` names their method)."""


def create_webhook(
    plans: Plans, url: str, event_types: Sequence[str], tasks: Sequence[str], queues: Sequence[str]
) -> Plan[Document]:
    """Subscribe the key's tenant to `event_types`; the document shows the secret, once."""
    body = {
        "url": url,
        "event_types": list(event_types),
        "tasks": list(tasks),
        "queues": list(queues),
    }
    document, _ = yield from plans.call(Send("POST", "/v1/webhooks", json=body), retry=False)
    return dict(document)


def webhooks(plans: Plans) -> Plan[Documents]:
    """The tenant's subscriptions (every tenant's for an admin key)."""
    document, _ = yield from plans.call(Send("GET", "/v1/webhooks"))
    return list(document["subscriptions"])


def get_webhook(plans: Plans, subscription_id: int) -> Plan[Document]:
    """One subscription."""
    document, _ = yield from plans.call(Send("GET", f"/v1/webhooks/{subscription_id}"))
    return dict(document)


def delete_webhook(plans: Plans, subscription_id: int) -> Plan[None]:
    """Delete a subscription (a retry after a lost answer would be a 404)."""
    step = Send("DELETE", f"/v1/webhooks/{subscription_id}")
    yield from plans.call(step, retry=False)


def rotate_webhook_secret(plans: Plans, subscription_id: int) -> Plan[Document]:
    """A new secret for a subscription; the old one keeps signing for a grace period."""
    step = Send("POST", f"/v1/webhooks/{subscription_id}/rotate-secret")
    document, _ = yield from plans.call(step, retry=False)
    return dict(document)


def signing_secret(plans: Plans, rotate: bool) -> Plan[Document]:
    """The secret that signs deliveries to the tenant's jobs' own `webhook_url`, made
    on first use; with `rotate`, a new one (the old one keeps signing for a while)."""
    if rotate:
        step = Send("POST", "/v1/webhooks/signing-secret/rotate")
        document, _ = yield from plans.call(step, retry=False)
    else:
        document, _ = yield from plans.call(Send("GET", "/v1/webhooks/signing-secret"))
    return dict(document)


def deliveries(plans: Plans, job_id: int) -> Plan[Documents]:
    """The webhook deliveries of a job's events, with their attempts."""
    document, _ = yield from plans.call(Send("GET", f"/v1/jobs/{job_id}/deliveries"))
    return list(document["deliveries"])


def redeliver(plans: Plans, delivery_id: int) -> Plan[Document]:
    """Send a delivery again (same body, same `webhook-id`)."""
    step = Send("POST", f"/v1/deliveries/{delivery_id}/redeliver")
    document, _ = yield from plans.call(step, retry=False)
    return dict(document)
