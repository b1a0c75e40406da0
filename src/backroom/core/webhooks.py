"""Webhooks as values: subscriptions, deliveries and their attempts, and the payload.

A subscription asks for POSTs of some event types (optionally only for some tasks or
queues) to one URL, signed with its own secret. A delivery is one event for one
receiver: the payload is fixed when the delivery is made, so every retry sends the same
bytes under the same `webhook-id`. Each delivery is run by a backroom job of its own, so
it has leases, retries with backoff, a dead-letter list and redrive like any job.

>>> sub = WebhookSubscription(1, "acme", "https://x.test/h", ("job.succeeded",), (), (),
...     True, None, 0, 0, 0, "whsec_new", "whsec_old", 5_000)
>>> sub.signing_secrets(now=4_999)
['whsec_new', 'whsec_old']
>>> sub.signing_secrets(now=5_000)
['whsec_new']
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from backroom.core.feed import TERMINAL_TYPES, FeedEvent
from backroom.core.job import JSON, Job

JOB_WEBHOOK = 0
"""The `subscription_id` of deliveries to a job's own `webhook_url`."""

JOB_WEBHOOK_TYPES = TERMINAL_TYPES
"""What a job's own `webhook_url` receives: its end (succeeded, failed or cancelled)."""

DELIVERY_TASK = "webhooks.deliver"
"""The task that sends one delivery."""

DELIVERY_QUEUE = "webhooks"
"""The queue of delivery jobs, apart from the tenants' work."""

DELIVERY_TENANT = "_webhooks"
"""The tenant that owns delivery jobs: no API tenant can have this name."""

SUBSCRIBABLE_TYPES = (*sorted(TERMINAL_TYPES), "job.dead_lettered", "job.progress")
"""The event types a subscription may ask for; `job.dead_lettered` is a job that failed."""


def signing_secrets(secret: str, previous: str | None, until: int | None, now: int) -> list[str]:
    """`secret`, and `previous` too while its rotation grace (before `until`) lasts."""
    if previous and (until or 0) > now:
        return [secret, previous]
    return [secret]


@dataclass(frozen=True, slots=True)
class WebhookSubscription:
    """A tenant's standing request for signed POSTs of some events."""

    id: int
    tenant: str
    url: str
    event_types: tuple[str, ...]
    tasks: tuple[str, ...]
    queues: tuple[str, ...]
    enabled: bool
    disabled_reason: str | None
    failure_streak: int
    created_at: int
    updated_at: int
    secret: str
    previous_secret: str | None = None
    previous_secret_until: int | None = None

    def signing_secrets(self, now: int) -> list[str]:
        """The secrets to sign with at `now`: the current one, and the previous one in its grace."""
        return signing_secrets(self.secret, self.previous_secret, self.previous_secret_until, now)

    def wanted_types(self, event: FeedEvent) -> list[str]:
        """The types under which this subscription wants `event` (none, one, or two)."""
        if not self.enabled or event.tenant != self.tenant:
            return []
        if (self.tasks and event.task not in self.tasks) or (
            self.queues and event.queue not in self.queues
        ):
            return []
        types = [event.type]
        if event.type == "job.failed":
            types.append("job.dead_lettered")
        return [kind for kind in types if kind in self.event_types]


@dataclass(frozen=True, slots=True)
class NewSubscription:
    """A subscription to create."""

    tenant: str
    url: str
    event_types: tuple[str, ...]
    secret: str
    tasks: tuple[str, ...] = ()
    queues: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SigningSecret:
    """The secret that signs deliveries to a tenant's jobs' own `webhook_url`."""

    tenant: str
    secret: str
    previous_secret: str | None = None
    previous_secret_until: int | None = None

    def signing_secrets(self, now: int) -> list[str]:
        """The secrets to sign with at `now`: the current one, and the previous one in its grace."""
        return signing_secrets(self.secret, self.previous_secret, self.previous_secret_until, now)


@dataclass(frozen=True, slots=True)
class NewDelivery:
    """One event for one receiver, before it is stored."""

    tenant: str
    job_id: int
    subscription_id: int
    event_id: int
    event_type: str
    url: str
    payload: str

    @property
    def message_id(self) -> str:
        """The `webhook-id`: the same for every retry, different for every (event, receiver)."""
        return f"msg_{self.event_id}_{self.subscription_id}_{self.event_type.removeprefix('job.')}"


@dataclass(frozen=True, slots=True)
class WebhookDelivery:
    """A stored delivery and how its attempts went so far."""

    id: int
    tenant: str
    job_id: int
    subscription_id: int
    event_id: int
    event_type: str
    url: str
    message_id: str
    payload: str
    delivery_job_id: int | None
    state: str
    attempts: int
    last_status: int | None
    last_latency_ms: int | None
    last_error: str | None
    created_at: int
    updated_at: int


@dataclass(frozen=True, slots=True)
class DeliveryAttempt:
    """One POST of a delivery: the receiver's status (None: no answer), latency and error."""

    delivery_id: int
    number: int
    at: int
    status: int | None
    latency_ms: int
    error: str | None = None

    @property
    def succeeded(self) -> bool:
        """Only a 2xx answer delivers; redirects are not followed."""
        return self.status is not None and 200 <= self.status < 300


@dataclass(frozen=True, slots=True)
class OutgoingDelivery:
    """A delivery with what its next POST is signed with: its subscription (None once
    deleted) or, for a job's own `webhook_url`, the tenant's secret (None if it has none)."""

    delivery: WebhookDelivery
    subscription: WebhookSubscription | None = None
    secret: SigningSecret | None = None


@dataclass(frozen=True, slots=True)
class SubscriptionOutcome:
    """What an attempt means for its subscription: a success ends the failure streak; a
    failure lengthens it, disabling the subscription when it reaches `disable_after`, or
    at once with `disable_reason`."""

    succeeded: bool
    disable_after: int
    disable_reason: str | None = None

    @property
    def streak_reason(self) -> str:
        """Why a subscription the streak disabled is disabled."""
        return f"disabled after {self.disable_after} failed deliveries in a row"


def payload(event_type: str, event: FeedEvent, job: Job, status_url: str, usage: JSON) -> str:
    """The body of a delivery, compact JSON: `{type, timestamp, data}`.

    `status` is the job's state that the event reports; the result or error are the
    job's as stored when the delivery was made.
    """
    data: dict[str, JSON] = {
        "job_id": job.id,
        "status": str(event.to_state),
        "task": job.task,
        "queue": job.queue,
        "attempt": job.attempt,
        "status_url": status_url,
    }
    if job.result is not None:
        data["result"] = job.result
    if job.error is not None:
        data["error"] = {"kind": job.error.kind, "message": job.error.message}
    if usage is not None:
        data["usage"] = usage
    body = {"type": event_type, "timestamp": _iso(event.at), "data": data}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")
