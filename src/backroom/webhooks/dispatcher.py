"""From the event feed to deliveries: the durable reader that decides who gets what.

The dispatcher follows the feed from a position stored under its name. For a batch of
events it works out the deliveries (each subscription that wants the event, and the
job's own `webhook_url` for a terminal event), then in one transaction stores them,
each with the job that will send it, and moves its position past the batch. Two
dispatchers (in two workers) may read the same batch; only the one whose position still
matches commits, and the unique key of a delivery makes a re-read harmless too. So every
event is turned into its deliveries once, whatever crashes in between. The one that
lost stands back while the other one moves the position (see `WebhookDispatcher.run`).

The store reads in full only the events that may call for a delivery
(`FeedFilter.deliverable`): while no tenant subscribes, the terminal events of jobs with
a URL of their own. It scans up to `DELIVERABLE_SCAN` x `batch` events for at most
`batch` of those, so a feed of ordinary jobs costs about a scan of it, in few
statements (a whole
dispatch of no-op jobs' events: PostgreSQL 2.5-2.9 us of the server's CPU an event,
against 4.3-4.9 with each event's job read; SQLite 2-3 us of the process's against
10.5-11 with every event made a `FeedEvent`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable

from backroom.clock import Clock, sleep_unless
from backroom.core.errors import StoreError
from backroom.core.feed import TERMINAL_TYPES, FeedEvent, FeedFilter, FeedPosition
from backroom.core.job import JSON, Job, NewJob
from backroom.core.webhooks import (
    DELIVERY_QUEUE,
    DELIVERY_TASK,
    DELIVERY_TENANT,
    JOB_WEBHOOK,
    NewDelivery,
    WebhookSubscription,
    payload,
)
from backroom.service.documents import usage_document
from backroom.store.protocol import Store
from backroom.webhooks.delivery import DELIVERY_RETRY

log = logging.getLogger("backroom.webhooks.dispatcher")

CONSUMER = "webhooks"
"""The name under which the dispatcher's position is stored."""

StatusUrl = Callable[[int], str]
"""Where a receiver can read a job: `status_url` in the payload."""

SETTLE_MS = 5
"""How long a woken dispatcher lets the writes that woke it settle before it reads.

A submission wakes the feed's readers and the workers at once (its statement sends
both notifications), and a worker process runs a dispatcher: read at once, its reads
ran beside the claim of that very job and delayed it (issue 13's pickup latency). The
claim takes 2-3 ms, so 5 ms is past it. 20 ms (the first setting) added its whole
length to every webhook: against it, 5 ms gave paced deliveries' p50 / p99 12 / 20 ms
instead of 21 / 38, and pickups at load 5-6.6 p50 / p99 9.8 / 17.8 ms instead of 11.1 /
22.9. While jobs run, reads are as few as before (18-23 against 16-17 per 10,000 no-op
jobs): each read scans up to `DELIVERABLE_SCAN` batches, and one that stops at its limit
is followed at once, whatever the settle."""


def delivery_job(
    now: int, again: bool = False, max_attempts: int = DELIVERY_RETRY.max_attempts
) -> Callable[[int], NewJob]:
    """The job that sends a delivery, keyed so it is made once (or once more, `again`)."""

    def build(delivery_id: int) -> NewJob:
        return NewJob(
            task=DELIVERY_TASK,
            input={"delivery_id": delivery_id},
            run_at=now,
            tenant=DELIVERY_TENANT,
            queue=DELIVERY_QUEUE,
            max_attempts=max_attempts,
            idempotency_key=f"delivery-{delivery_id}" + (f"-again-{now}" if again else ""),
        )

    return build


class WebhookDispatcher:
    """Reads the feed after its stored position and stores the deliveries it calls for."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        status_url: StatusUrl,
        *,
        batch: int = 500,
        max_attempts: int = DELIVERY_RETRY.max_attempts,
        settle_ms: int = SETTLE_MS,
    ) -> None:
        self._max_attempts = max_attempts
        self._settle_ms = settle_ms
        self._store = store
        self._clock = clock
        self._status_url = status_url
        self._batch = batch
        self._woken = asyncio.Event()
        # Where this dispatcher last moved the stored position: while no other one moves
        # it, the next batch starts there without reading it (two statements a batch).
        self._position: FeedPosition | None = None
        # Whether the last batch read stopped at its limit (`FeedPage.full`).
        self._more = False
        self._lost = False
        # Standing back after a lost race: the stored position as last seen (see `run`).
        self._watched: FeedPosition | None = None

    def wake(self) -> None:
        """Something was written to the feed: look now rather than at the next poll."""
        self._woken.set()

    async def run(self, stopping: asyncio.Event, poll_ms: int = 1_000) -> None:
        """Dispatch until `stopping` is set: each batch as it comes, else every `poll_ms`.

        A dispatcher that finds another one (in another process) took a batch before it
        stands back for `poll_ms`, deaf to new events, so that one dispatches alone
        instead of both reading every event and one throwing its work away. Then it
        looks at the stored position only, and stands back again while it still moves
        (the other one is at work: coming back to read, it took a batch now and then,
        and the other one's read of it was thrown away). Once it stays put for
        `poll_ms`, the other one idles or is gone, and this one reads again. Woken, it
        reads `settle_ms` later (see `SETTLE_MS`), and it reads again at once only after
        a full batch: while jobs run, every claim and finish wakes it, and reading
        whatever little had come each time kept it reading without a pause beside the
        workers (issue 13: three statements a cycle, more writes than the claims').
        """
        self._store.on_feed_change(self.wake)
        while not stopping.is_set():
            self._woken.clear()
            try:
                if await self.dispatch_once() and self._more:
                    continue  # the batch stopped at its limit: the rest is waiting
            except StoreError as error:
                # The store comes back by itself (a restart, a terminated session): wait.
                log.warning("webhook dispatch failed, will retry: %s", error)
            if self._lost:
                self._lost = False
                await sleep_unless(self._clock, poll_ms, stopping)
                continue
            await sleep_unless(self._clock, poll_ms, self._woken, stopping)
            if self._woken.is_set():  # hints that come meanwhile share the next read
                await sleep_unless(self._clock, self._settle_ms, stopping)

    async def dispatch_once(self) -> int:
        """Dispatch one batch; 0 when there was nothing new (or another dispatcher took
        it), else how many of its events a webhook may be sent for (at least 1)."""
        now = self._clock.now()
        remembered = self._position
        position = remembered or await self._store.feed_consumer(CONSUMER, now)
        if remembered is None and self._moved_by_another(position):
            return 0
        by_tenant: dict[str, list[WebhookSubscription]] = defaultdict(list)
        for subscription in await self._store.list_subscriptions(None, enabled_only=True):
            by_tenant[subscription.tenant].append(subscription)
        # Only the events a webhook may be sent for are read in full.
        wanted = FeedFilter(deliverable=tuple(by_tenant))
        page = await self._store.read_feed(position, wanted, self._batch)
        self._more = page.full
        if page.position == position:
            return 0
        deliveries = await self._deliveries(page.events, by_tenant)
        moved = await self._store.dispatch_deliveries(
            CONSUMER,
            position,
            page.position,
            deliveries,
            delivery_job(now, max_attempts=self._max_attempts),
            now,
        )
        if moved:
            self._position = page.position
            return max(1, len(page.events))
        # Another dispatcher moved the position: nothing was stored.
        self._position = None
        if remembered:  # the remembered position was behind: start from the stored one
            return await self.dispatch_once()
        self._lost = True
        # Stale by now: the first look after the stand-back finds the position moved,
        # and stands back once more, then watches from where it found it.
        self._watched = position
        return 0

    def _moved_by_another(self, stored: FeedPosition) -> bool:
        """Standing back: whether the stored position moved since the last look (another
        dispatcher is at work); if so, stand back again."""
        watched, self._watched = self._watched, None
        if watched is None or watched == stored:
            return False
        self._watched = stored
        self._lost = True
        return True

    async def _deliveries(
        self, events: list[FeedEvent], by_tenant: dict[str, list[WebhookSubscription]]
    ) -> list[NewDelivery]:
        pending = [
            (
                event,
                [
                    (subscription.id, subscription.url, kind)
                    for subscription in by_tenant.get(event.tenant, [])
                    for kind in subscription.wanted_types(event)
                ],
            )
            for event in events
        ]
        # A job's own URL is read with the job: only a job that has one is read for a
        # terminal event no subscription wants. The batch's jobs are read at once.
        read = [
            (event, targets)
            for event, targets in pending
            if targets or (event.webhook and event.type in TERMINAL_TYPES)
        ]
        jobs = await self._store.feed_jobs({event.job_id for event, _ in read})
        found: list[NewDelivery] = []
        for event, targets in read:
            job = jobs.get(event.job_id)
            if job is None:
                continue
            if event.type in TERMINAL_TYPES and job.webhook_url:
                targets.append((JOB_WEBHOOK, job.webhook_url, event.type))
            usage = await self._usage(job) if targets else None
            found.extend(self._delivery(event, job, usage, *target) for target in targets)
        return found

    async def _usage(self, job: Job) -> JSON:
        """What the job's LLM calls used (a job in a lane only), as the job document shows."""
        if job.lane is None:
            return None
        return usage_document(await self._store.usage_totals(job.id))

    def _delivery(
        self, event: FeedEvent, job: Job, usage: JSON, subscription_id: int, url: str, kind: str
    ) -> NewDelivery:
        body = payload(kind, event, job, self._status_url(job.id), usage)
        return NewDelivery(
            tenant=event.tenant,
            job_id=event.job_id,
            subscription_id=subscription_id,
            event_id=event.position.event_id,
            event_type=kind,
            url=url,
            payload=body,
        )
