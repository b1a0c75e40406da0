"""The event feed on SQLite: job_events in id order, and the positions of durable readers.

One writer at a time means ids are handed out in commit order, so a position is an event
id (its `commit` part stays 0) and a reader can never be passed by a late commit.
"""

from __future__ import annotations

import sqlite3

from backroom.core.feed import (
    DELIVERABLE_SCAN,
    FeedEvent,
    FeedFilter,
    FeedPage,
    FeedPosition,
    deliverable_read_full,
)
from backroom.core.job import JobState
from backroom.store.rows import dump_json

_READ = """
SELECT e.id, e.job_id, e.at, e.from_state, e.to_state, e.reason, j.tenant, j.task, j.queue,
       j.webhook_url IS NOT NULL AS webhook
FROM job_events AS e JOIN jobs AS j ON j.id = e.job_id
WHERE e.id > :after
  AND (:tenant IS NULL OR j.tenant = :tenant)
  AND (:job_id IS NULL OR e.job_id = :job_id)
  AND (:any_task OR j.task IN (SELECT value FROM json_each(:tasks)))
  AND (:any_queue OR j.queue IN (SELECT value FROM json_each(:queues)))
ORDER BY e.id
LIMIT :limit
"""

# A job's own events come from its index, not a scan of the whole feed.
_READ_JOB = """
SELECT e.id, e.job_id, e.at, e.from_state, e.to_state, e.reason, j.tenant, j.task, j.queue,
       j.webhook_url IS NOT NULL AS webhook
FROM job_events AS e JOIN jobs AS j ON j.id = e.job_id
WHERE e.job_id = :job_id AND e.id > :after AND (:tenant IS NULL OR j.tenant = :tenant)
ORDER BY e.id
LIMIT :limit
"""

# The webhook dispatcher's read: of the next `:scan` events (`DELIVERABLE_SCAN` x
# `limit`) the first `limit` it may send (`FeedFilter.deliverable`) come back; when
# fewer did, then the last one read, for the position, with how many were read (all of
# them: more may be waiting, `FeedPage.full`). The job of an event is looked up only
# where a tenant subscribes or the event is terminal; one statement, so all parts see
# the same events.
_READ_DELIVERABLE = """
WITH scanned AS MATERIALIZED (
    SELECT * FROM job_events WHERE id > :after ORDER BY id LIMIT :scan
), wanted AS MATERIALIZED (
    SELECT e.id, e.job_id, e.at, e.from_state, e.to_state, e.reason, j.tenant, j.task,
           j.queue, j.webhook_url IS NOT NULL AS webhook, 1 AS wanted, 0 AS scanned
    FROM scanned AS e JOIN jobs AS j ON j.id = e.job_id
    WHERE (:any_tenant OR e.to_state IN ('succeeded', 'failed', 'cancelled'))
      AND (j.tenant IN (SELECT value FROM json_each(:tenants))
           OR (j.webhook_url IS NOT NULL AND e.to_state IN ('succeeded', 'failed', 'cancelled')))
    ORDER BY e.id LIMIT :limit
)
SELECT * FROM (
    SELECT * FROM wanted
    UNION ALL
    SELECT * FROM (
        SELECT id, job_id, at, from_state, to_state, reason, '', '', '', 0, 0,
               (SELECT count(*) FROM scanned)
        FROM scanned WHERE (SELECT count(*) FROM wanted) < :limit ORDER BY id DESC LIMIT 1
    )
)
ORDER BY id
"""

_CURSOR = "SELECT commit_id, event_id FROM feed_cursors WHERE consumer = ?"

_START_CURSOR = """
INSERT INTO feed_cursors (consumer, commit_id, event_id, updated_at)
VALUES (?, 0, (SELECT coalesce(max(id), 0) FROM job_events), ?)
ON CONFLICT (consumer) DO NOTHING
"""

_MOVE_CURSOR = """
UPDATE feed_cursors SET event_id = ?, updated_at = ?
WHERE consumer = ? AND commit_id = 0 AND event_id = ?
"""

_FLOOR = "SELECT min(event_id) FROM feed_cursors"


def read_feed(
    connection: sqlite3.Connection, after: FeedPosition, where: FeedFilter, limit: int
) -> FeedPage:
    """Up to `limit` events after `after` that `where` lets through, and where to go on."""
    params = {
        "after": after.event_id,
        "tenant": where.tenant,
        "job_id": where.job_id,
        "limit": limit,
    }
    if where.job_id is not None:
        rows = connection.execute(_READ_JOB, params).fetchall()
    elif where.deliverable is not None:
        return _read_deliverable(connection, after, where, limit)
    else:
        params |= {
            "any_task": not where.tasks,
            "tasks": dump_json(list(where.tasks)),
            "any_queue": not where.queues,
            "queues": dump_json(list(where.queues)),
        }
        rows = connection.execute(_READ, params).fetchall()
    events = [_event(row) for row in rows]
    position = events[-1].position if events else after
    full = len(rows) == limit
    return FeedPage([event for event in events if where.matches(event)], position, full)


def _read_deliverable(
    connection: sqlite3.Connection, after: FeedPosition, where: FeedFilter, limit: int
) -> FeedPage:
    """`read_feed` for `where.deliverable`: the others are skipped in the database."""
    tenants = list(where.deliverable or ())
    params = {
        "after": after.event_id,
        "limit": limit,
        "scan": limit * DELIVERABLE_SCAN,
        "any_tenant": bool(tenants),
        "tenants": dump_json(tenants),
    }
    rows = connection.execute(_READ_DELIVERABLE, params).fetchall()
    if not rows:
        return FeedPage([], after)
    events = [_event(row) for row in rows if row["wanted"]]
    position = FeedPosition(0, rows[-1]["id"])
    scanned = max(row["scanned"] for row in rows)  # the last one read may be wanted too
    full = deliverable_read_full(len(events), scanned, limit)
    return FeedPage([event for event in events if where.matches(event)], position, full)


def _event(row: sqlite3.Row) -> FeedEvent:
    return FeedEvent(
        position=FeedPosition(0, row["id"]),
        job_id=row["job_id"],
        tenant=row["tenant"],
        task=row["task"],
        queue=row["queue"],
        at=row["at"],
        from_state=JobState(row["from_state"]) if row["from_state"] else None,
        to_state=JobState(row["to_state"]),
        reason=row["reason"],
        webhook=bool(row["webhook"]),
    )


def feed_head(connection: sqlite3.Connection) -> FeedPosition:
    """The position of the newest event: a reader starting there sees only what comes next."""
    (newest,) = connection.execute("SELECT coalesce(max(id), 0) FROM job_events").fetchone()
    return FeedPosition(0, newest)


def consumer_position(connection: sqlite3.Connection, consumer: str, now: int) -> FeedPosition:
    """Where the durable reader `consumer` is; a new one starts at the head of the feed."""
    connection.execute(_START_CURSOR, (consumer, now))
    row = connection.execute(_CURSOR, (consumer,)).fetchone()
    return FeedPosition(row["commit_id"], row["event_id"])


def move_consumer(
    connection: sqlite3.Connection,
    consumer: str,
    expected: FeedPosition,
    to: FeedPosition,
    now: int,
) -> bool:
    """Move `consumer` from `expected` to `to`; False if another reader moved it first."""
    moved = connection.execute(_MOVE_CURSOR, (to.event_id, now, consumer, expected.event_id))
    return moved.rowcount == 1


def retention_floor(connection: sqlite3.Connection) -> FeedPosition | None:
    """The oldest position of any durable reader: events after it must be kept."""
    (oldest,) = connection.execute(_FLOOR).fetchone()
    return None if oldest is None else FeedPosition(0, oldest)
