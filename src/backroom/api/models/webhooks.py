"""The wire format of webhook subscriptions and deliveries (the bodies are built by
`backroom.service.webhooks`; these models validate requests and describe responses)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from backroom.api.models.jobs import Name

EventType = Literal[
    "job.succeeded", "job.failed", "job.cancelled", "job.dead_lettered", "job.progress"
]
WebhookUrl = Annotated[str, StringConstraints(min_length=8, max_length=2048)]


class SubscriptionCreate(BaseModel):
    """The body of `POST /v1/webhooks`."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"url": "https://example.com/hooks/backroom", "event_types": ["job.succeeded"]}
            ]
        },
    )

    url: WebhookUrl = Field(description="An http(s) URL on a public address.")
    event_types: list[EventType] = Field(
        min_length=1, max_length=5, description="The events to receive."
    )
    tasks: list[Name] = Field(default_factory=list, max_length=50, description="Only these tasks.")
    queues: list[Name] = Field(
        default_factory=list, max_length=50, description="Only these queues."
    )


class Subscription(BaseModel):
    """A webhook subscription. `secret` appears only when it is created or rotated."""

    id: int
    tenant: str
    url: str
    event_types: list[str]
    tasks: list[str]
    queues: list[str]
    enabled: bool
    disabled_reason: str | None
    failure_streak: int
    secret_hint: str
    secret: str | None = None
    previous_secret_valid_until: str | None = None
    created_at: str
    updated_at: str


class SubscriptionList(BaseModel):
    """The caller's subscriptions."""

    subscriptions: list[Subscription]


class SigningSecret(BaseModel):
    """The secret that signs deliveries to a tenant's jobs' own `webhook_url`."""

    tenant: str
    secret: str
    previous_secret_valid_until: str | None = None


class DeliveryAttempt(BaseModel):
    """One POST of a delivery."""

    number: int
    at: str
    status: int | None
    latency_ms: int
    error: str | None


class Delivery(BaseModel):
    """One event sent to one receiver, and how its attempts went."""

    id: int
    job_id: int
    subscription_id: int | None
    event_type: str
    url: str
    webhook_id: str
    state: Literal["pending", "retrying", "succeeded", "failed"]
    attempts: int
    last_status: int | None
    last_latency_ms: int | None
    last_error: str | None
    delivery_job_id: int | None
    created_at: str
    updated_at: str
    attempt_history: list[DeliveryAttempt]


class DeliveryList(BaseModel):
    """The deliveries of one job's events."""

    deliveries: list[Delivery]
