"""Webhooks in a worker process: the delivery task on the app, and the dispatcher beside
the worker loop.

`backroom worker` and `backroom serve` call `install_webhooks` once the app is open:
from then on the process turns feed events into deliveries and sends the ones its
worker claims. Several processes may do both; the feed position and the delivery keys
keep every event from being delivered twice to one receiver.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TypeVar

from backroom.app import App
from backroom.config import Settings
from backroom.core.retry import RetryPolicy
from backroom.core.webhooks import DELIVERY_QUEUE, DELIVERY_TASK
from backroom.webhooks.delivery import DELIVERY_RETRY, Deliverer, DeliverySettings
from backroom.webhooks.dispatcher import WebhookDispatcher
from backroom.webhooks.sender import SenderSettings, WebhookSender
from backroom.webhooks.targets import TargetPolicy

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class WebhookSettings:
    """How this process sends webhooks.

    policy          which addresses may be called (public ones, plus the allow-list)
    timeout_s       how long a receiver has to answer one POST
    per_receiver    POSTs in flight to one host and port at once
    disable_after   failed attempts in a row that disable a subscription
    public_url      the server's URL, for `status_url` in payloads ("" gives a path)
    poll_ms         how often the dispatcher looks at the feed when nothing woke it
    retry           the retry policy of delivery jobs (about three days by default)
    """

    policy: TargetPolicy = field(default_factory=TargetPolicy)
    timeout_s: float = 10.0
    per_receiver: int = 8
    disable_after: int = 50
    public_url: str = ""
    poll_ms: int = 1_000
    retry: RetryPolicy = DELIVERY_RETRY

    @classmethod
    def from_settings(cls, settings: Settings) -> WebhookSettings:
        """The webhook settings the process settings (the environment) imply."""
        return cls(
            policy=TargetPolicy.from_setting(settings.webhook_allow),
            public_url=settings.public_url or "",
        )


class WebhookRuntime:
    """The dispatcher and the sender of one process."""

    def __init__(self, app: App, settings: WebhookSettings) -> None:
        self._settings = settings
        self.sender = WebhookSender(
            app.clock, SenderSettings(settings.timeout_s, settings.per_receiver, settings.policy)
        )
        self.dispatcher = WebhookDispatcher(
            app.store, app.clock, self.status_url, max_attempts=settings.retry.max_attempts
        )

    def status_url(self, job_id: int) -> str:
        """Where a receiver reads the job whose event it got."""
        return f"{self._settings.public_url.rstrip('/')}/v1/jobs/{job_id}"

    async def alongside(self, work: Awaitable[T]) -> T:
        """Dispatch while `work` (a worker's run) runs; stop when it ends."""
        stopping = asyncio.Event()
        dispatching = asyncio.create_task(
            self.dispatcher.run(stopping, self._settings.poll_ms), name="backroom-webhooks"
        )
        try:
            return await work
        finally:
            stopping.set()
            with contextlib.suppress(asyncio.CancelledError):
                await dispatching


def install_webhooks(app: App, settings: WebhookSettings) -> WebhookRuntime:
    """Register `webhooks.deliver` on the open `app`; the runtime that dispatches."""
    runtime = WebhookRuntime(app, settings)
    if DELIVERY_TASK not in app.tasks:
        deliverer = Deliverer(app.store, runtime.sender, DeliverySettings(settings.disable_after))
        app.tasks.add(deliverer.task(settings.retry))
    app.close_with(runtime.sender.close)
    return runtime


def with_webhook_queue(queues: tuple[str, ...]) -> tuple[str, ...]:
    """`queues` plus the delivery queue, unless `queues` is empty (every queue)."""
    if not queues or DELIVERY_QUEUE in queues:
        return queues
    return (*queues, DELIVERY_QUEUE)
