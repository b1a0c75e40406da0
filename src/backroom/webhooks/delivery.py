"""The `webhooks.deliver` task: one POST per attempt of a stored delivery.

A delivery is a durable job of its own, so a crash, a restart or a slow receiver costs
time, never a notification: leases bring a lost attempt back, retries back off with
jitter over about three days (the first within seconds), and a delivery that never gets
through ends on the dead-letter list, from which it can be redriven. Every attempt signs
anew (a fresh `webhook-timestamp`) under the delivery's one `webhook-id`, and is
recorded with the receiver's status code and latency.

What an answer means: a 2xx delivers; 410 Gone disables the subscription; 429 and 503
may say when to come back (`Retry-After`, capped at an hour); anything else, including a
redirect (never followed) or no answer within the timeout, is tried again. A URL that is
no longer allowed (its name now resolves to a private address, say) fails at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from backroom.context import JobContext
from backroom.core.errors import Permanent, Retryable, WebhookTargetRefused
from backroom.core.job import JSON
from backroom.core.retry import Jitter, RetryPolicy
from backroom.core.webhooks import (
    DELIVERY_QUEUE,
    DELIVERY_TASK,
    JOB_WEBHOOK,
    DeliveryAttempt,
    OutgoingDelivery,
    SubscriptionOutcome,
    WebhookDelivery,
)
from backroom.store.protocol import Store
from backroom.tasks import Task
from backroom.webhooks.sender import Answer, WebhookSender
from backroom.webhooks.signing import signature_headers

DELIVERY_RETRY = RetryPolicy(
    max_attempts=18, base_ms=5_000, factor=2.0, cap_ms=12 * 3_600_000, jitter=Jitter.EQUAL
)
"""18 attempts from 5 s apart to 12 h apart: about three days in all."""

MAX_RETRY_AFTER_MS = 3_600_000
"""The longest wait a receiver's `Retry-After` can ask for."""


@dataclass(frozen=True, slots=True)
class DeliverySettings:
    """How deliveries behave: when a subscription that keeps failing is disabled."""

    disable_after_failures: int = 50


class Deliverer:
    """Runs one attempt of a delivery: sign, POST, record, and say how it went."""

    def __init__(
        self, store: Store, sender: WebhookSender, settings: DeliverySettings | None = None
    ) -> None:
        self._store = store
        self._sender = sender
        self._settings = settings or DeliverySettings()

    def task(self, retry: RetryPolicy = DELIVERY_RETRY) -> Task:
        """The `webhooks.deliver` task, to register on an app."""
        return Task(DELIVERY_TASK, self.deliver, retry=retry, queue=DELIVERY_QUEUE)

    async def deliver(self, ctx: JobContext, delivery_input: JSON) -> JSON:
        """The handler: `{"delivery_id": N}` in, `{"status": code, "latency_ms": ms}` out."""
        outgoing = await self._outgoing(delivery_input)
        delivery, now = outgoing.delivery, ctx.clock.now()
        signing = _signing_secrets(outgoing, now)
        headers = signature_headers(delivery.message_id, now // 1000, delivery.payload, signing)
        try:
            answer = await self._sender.post(delivery.url, delivery.payload, headers)
        except WebhookTargetRefused as refused:
            await self._record(delivery, Answer(None, 0, error=str(refused)), now, final=True)
            raise Permanent(str(refused)) from None
        last = ctx.attempt >= ctx.job.max_attempts
        if answer.delivered:
            await self._record(delivery, answer, now, final=True)
            return {"status": answer.status, "latency_ms": answer.latency_ms}
        if answer.status == 410:
            await self._record(
                delivery, answer, now, final=True, disable="the receiver answered 410 Gone"
            )
            raise Permanent(f"{answer.error}: subscription disabled")
        await self._record(delivery, answer, now, final=last)
        wait = (
            None
            if answer.retry_after_ms is None
            else min(answer.retry_after_ms, MAX_RETRY_AFTER_MS)
        )
        raise Retryable(answer.error or "not delivered", after_ms=wait)

    async def _outgoing(self, delivery_input: JSON) -> OutgoingDelivery:
        delivery_id = (
            delivery_input.get("delivery_id") if isinstance(delivery_input, dict) else None
        )
        if not isinstance(delivery_id, int):
            raise Permanent("a webhooks.deliver job needs {'delivery_id': N}")
        outgoing = await self._store.outgoing_delivery(delivery_id)
        if outgoing is None:
            raise Permanent(f"delivery {delivery_id} no longer exists")
        return outgoing

    async def _record(
        self,
        delivery: WebhookDelivery,
        answer: Answer,
        now: int,
        *,
        final: bool,
        disable: str | None = None,
    ) -> None:
        state = "succeeded" if answer.delivered else ("failed" if final else "retrying")
        report = DeliveryAttempt(
            delivery.id, 0, now, answer.status, answer.latency_ms, answer.error
        )
        outcome = None
        if delivery.subscription_id != JOB_WEBHOOK:
            disable_after = self._settings.disable_after_failures
            outcome = SubscriptionOutcome(answer.delivered, disable_after, disable)
        await self._store.record_delivery_attempt(report, state, outcome)


def _signing_secrets(outgoing: OutgoingDelivery, now: int) -> list[str]:
    """The secrets the next POST is signed with, or `Permanent` if there are none."""
    delivery, subscription = outgoing.delivery, outgoing.subscription
    if delivery.subscription_id == JOB_WEBHOOK:
        if outgoing.secret is None:
            raise Permanent(f"tenant {delivery.tenant!r} has no webhook signing secret")
        return outgoing.secret.signing_secrets(now)
    if subscription is None:
        raise Permanent(f"subscription {delivery.subscription_id} was deleted")
    if not subscription.enabled:
        raise Permanent(
            f"subscription {subscription.id} is disabled: {subscription.disabled_reason}"
        )
    return subscription.signing_secrets(now)
