"""The event feed in memory: the events log in write order, and durable readers' places.

Calls run one at a time on the event loop, so the log's order is the commit order and a
position is an event id, as on SQLite.
"""

from __future__ import annotations

import bisect

from backroom.core.feed import DELIVERABLE_SCAN, FeedEvent, FeedFilter, FeedPage, FeedPosition
from backroom.store.memory.tables import MemoryTables


def read_feed(tables: MemoryTables, after: FeedPosition, where: FeedFilter, limit: int) -> FeedPage:
    """Up to `limit` events after `after` that `where` lets through, and where to go on
    (a deliverable read scans up to `DELIVERABLE_SCAN` x `limit` events)."""
    start = bisect.bisect_right(tables.feed, after.event_id, key=lambda entry: entry[0])
    budget = limit * DELIVERABLE_SCAN if where.deliverable is not None else limit
    scanned = 0
    kept: list[FeedEvent] = []
    position = after
    for event_id, job_id, event in tables.feed[start:]:
        if scanned == budget or len(kept) == limit:
            break
        row = tables.jobs.get(job_id)
        if row is None or (where.job_id is not None and job_id != where.job_id):
            continue
        scanned += 1
        read = FeedEvent(
            position=FeedPosition(0, event_id),
            job_id=job_id,
            tenant=row.tenant,
            task=row.task,
            queue=row.queue,
            at=event.at,
            from_state=event.from_state,
            to_state=event.to_state,
            reason=event.reason,
            webhook=row.webhook_url is not None,
        )
        position = read.position
        if where.matches(read):
            kept.append(read)
    return FeedPage(kept, position, scanned == budget or len(kept) == limit)


def feed_head(tables: MemoryTables) -> FeedPosition:
    """The position of the newest event."""
    return FeedPosition(0, tables.feed[-1][0] if tables.feed else 0)


def consumer_position(tables: MemoryTables, consumer: str) -> FeedPosition:
    """Where the durable reader `consumer` is; a new one starts at the head."""
    if consumer not in tables.feed_cursors:
        tables.feed_cursors[consumer] = feed_head(tables).event_id
    return FeedPosition(0, tables.feed_cursors[consumer])


def move_consumer(
    tables: MemoryTables, consumer: str, expected: FeedPosition, to: FeedPosition
) -> bool:
    """Move `consumer` from `expected` to `to`; False if it was elsewhere."""
    if tables.feed_cursors.get(consumer) != expected.event_id:
        return False
    tables.feed_cursors[consumer] = to.event_id
    return True


def forget_jobs(tables: MemoryTables) -> None:
    """Drop the feed's events and the webhook deliveries of jobs that no longer exist."""
    tables.feed = [entry for entry in tables.feed if entry[1] in tables.jobs]
    hooks = tables.webhooks
    for delivery in [item for item in hooks.deliveries.values() if item.job_id not in tables.jobs]:
        del hooks.deliveries[delivery.id]
        hooks.attempts.pop(delivery.id, None)
