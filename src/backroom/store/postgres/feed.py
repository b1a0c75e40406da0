"""The event feed on PostgreSQL: job_events in (transaction id, event id) order.

Identity values are handed out before commit, so ids alone are not in commit order. Each
event row carries the id of the transaction that wrote it (`xid`, see migration 005); a
reader takes only rows of transactions older than the oldest one still running
(`pg_snapshot_xmin`), so no event can later commit behind the position it reached. The
horizon is the cluster's: a transaction left open anywhere on the server delays the
feed (never loses from it) until it ends, which `idle_in_transaction_session_timeout`
bounds. A single job's events need no horizon (see `_READ_JOB`).
"""

from __future__ import annotations

from backroom.core.feed import (
    DELIVERABLE_SCAN,
    FeedEvent,
    FeedFilter,
    FeedPage,
    FeedPosition,
    deliverable_read_full,
)
from backroom.store.postgres.database import PooledConnection as Connection
from backroom.store.rows import Row, job_state

_COLUMNS = """
e.xid::text::bigint AS commit_id, e.id, e.job_id, e.at, e.from_state, e.to_state, e.reason,
j.tenant, j.task, j.queue, j.webhook_url IS NOT NULL AS webhook
"""

_VISIBLE = "e.xid < pg_snapshot_xmin(pg_current_snapshot())"

_READ = f"""
SELECT {_COLUMNS}
FROM job_events AS e JOIN jobs AS j ON j.id = e.job_id
WHERE (e.xid, e.id) > ($1::text::xid8, $2) AND {_VISIBLE}
  AND ($3::text IS NULL OR j.tenant = $3)
  AND (cardinality($4::text[]) = 0 OR j.task = ANY($4))
  AND (cardinality($5::text[]) = 0 OR j.queue = ANY($5))
ORDER BY e.xid, e.id
LIMIT $6
"""

# The webhook dispatcher's reads: of the next `DELIVERABLE_SCAN` x `limit` events, the
# first `limit` it may send (`FeedFilter.deliverable`) come back (`wanted`), with the
# position of the last one read when fewer did.
_SCANNED = f"""
WITH scanned AS (
    SELECT e.* FROM job_events AS e
    WHERE (e.xid, e.id) > ($1::text::xid8, $2) AND {_VISIBLE}
    ORDER BY e.xid, e.id
    LIMIT $3 * {DELIVERABLE_SCAN}
)
"""

# The last event read, for the position, with how many were read (all of them: more may
# be waiting, `FeedPage.full`); not when `limit` events came back, whose last one is
# where the next read starts.
_AND_LAST_SCANNED = """
SELECT * FROM wanted
UNION ALL
(SELECT e.xid::text::bigint, e.id, e.job_id, e.at, e.from_state, e.to_state, e.reason,
        '', '', '', false, false, (SELECT count(*) FROM scanned)
 FROM scanned AS e WHERE (SELECT count(*) FROM wanted) < $3
 ORDER BY e.xid DESC, e.id DESC LIMIT 1)
ORDER BY commit_id, id
"""

# Some tenants subscribe ($4): every event's job is read, for its tenant.
_READ_DELIVERABLE = f"""{_SCANNED}, wanted AS (
SELECT {_COLUMNS}, true AS wanted, 0::bigint AS scanned
FROM scanned AS e
-- Each event's job by its primary key, in a subquery the planner cannot flatten (the
-- LIMIT): as a join, planned from a table without statistics (autovacuum off), it
-- read every job, finished ones too, for each batch of events.
CROSS JOIN LATERAL (
    SELECT tenant, task, queue, webhook_url FROM jobs WHERE jobs.id = e.job_id LIMIT 1
) AS j
WHERE j.tenant = ANY ($4::text[])
   OR (j.webhook_url IS NOT NULL AND e.to_state IN ('succeeded', 'failed', 'cancelled'))
ORDER BY e.xid, e.id LIMIT $3
)
{_AND_LAST_SCANNED}"""

# No tenant subscribes: only a terminal event of a job with its own URL is wanted. Such
# jobs are in `jobs_hooked` (migration 021), so each terminal event costs a probe of
# that small index, and the other events nothing, rather than a read of the job's row
# each (a batch of no-op jobs' events: 4-7 us an event against 1.6-2.7).
_READ_HOOKED = f"""{_SCANNED}, wanted AS (
SELECT {_COLUMNS}, true AS wanted, 0::bigint AS scanned
FROM scanned AS e
CROSS JOIN LATERAL (
    SELECT tenant, task, queue, webhook_url FROM jobs
    WHERE jobs.id = e.job_id AND jobs.webhook_url IS NOT NULL LIMIT 1
) AS j
WHERE e.to_state IN ('succeeded', 'failed', 'cancelled')
ORDER BY e.xid, e.id LIMIT $3
)
{_AND_LAST_SCANNED}"""

# One job's events are written by one transaction after another (each holds the job's
# row lock), so within a job the id order is the commit order: a job's reader needs no
# visibility horizon, and no long transaction elsewhere can hold it back.
_READ_JOB = f"""
SELECT {_COLUMNS}
FROM job_events AS e JOIN jobs AS j ON j.id = e.job_id
WHERE e.job_id = $1 AND e.id > $2 AND ($3::text IS NULL OR j.tenant = $3)
ORDER BY e.id
LIMIT $4
"""

_HEAD = f"""
SELECT coalesce(max(e.xid)::text::bigint, 0) AS commit_id, coalesce(max(e.id), 0) AS id
FROM job_events AS e
WHERE e.xid = (SELECT max(xid) FROM job_events AS e WHERE {_VISIBLE})
"""

_START_CURSOR = f"""
INSERT INTO feed_cursors (consumer, commit_id, event_id, updated_at)
SELECT $1, head.commit_id, head.id, $2 FROM ({_HEAD}) AS head
ON CONFLICT (consumer) DO NOTHING
"""

_MOVE_CURSOR = """
UPDATE feed_cursors SET commit_id = $1, event_id = $2, updated_at = $3
WHERE consumer = $4 AND commit_id = $5 AND event_id = $6
"""

# A move past events that called for nothing commits without waiting for its WAL flush:
# lost in a crash, the reader reads them again and finds nothing again (a later write
# that could change that, a new subscription, commits durably, flushing this one first).
# It no longer queues a flush of its own behind (or ahead of) a worker's claim: each
# submission, claim and finish wakes every dispatcher (see `postgres.feed_hint`).
_MOVE_CURSOR_LAZILY = """
UPDATE feed_cursors SET commit_id = $1, event_id = $2, updated_at = $3
WHERE consumer = $4 AND commit_id = $5 AND event_id = $6
  AND set_config('synchronous_commit', 'off', true) IS NOT NULL
"""


async def read_feed(
    connection: Connection, after: FeedPosition, where: FeedFilter, limit: int
) -> FeedPage:
    """Up to `limit` events after `after` that `where` lets through, and where to go on."""
    if where.job_id is not None:
        rows = await connection.fetch(_READ_JOB, where.job_id, after.event_id, where.tenant, limit)
    elif where.deliverable is not None:
        return await _read_deliverable(connection, after, where, limit)
    else:
        rows = await connection.fetch(
            _READ,
            str(after.commit),
            after.event_id,
            where.tenant,
            list(where.tasks),
            list(where.queues),
            limit,
        )
    events = [_event(row) for row in rows]
    position = events[-1].position if events else after
    full = len(rows) == limit
    return FeedPage([event for event in events if where.matches(event)], position, full)


async def _read_deliverable(
    connection: Connection, after: FeedPosition, where: FeedFilter, limit: int
) -> FeedPage:
    """`read_feed` for `where.deliverable`: the others are skipped in the database."""
    tenants = list(where.deliverable or ())
    arguments = (str(after.commit), after.event_id, limit)
    if tenants:
        rows = await connection.fetch(_READ_DELIVERABLE, *arguments, tenants)
    else:
        rows = await connection.fetch(_READ_HOOKED, *arguments)
    if not rows:
        return FeedPage([], after)
    events = [_event(row) for row in rows if row["wanted"]]
    last = rows[-1]
    position = FeedPosition(last["commit_id"], last["id"])
    scanned = max(row["scanned"] for row in rows)  # the last one read may be wanted too
    full = deliverable_read_full(len(events), scanned, limit)
    return FeedPage([event for event in events if where.matches(event)], position, full)


def _event(row: Row) -> FeedEvent:
    return FeedEvent(
        position=FeedPosition(row["commit_id"], row["id"]),
        job_id=row["job_id"],
        tenant=row["tenant"],
        task=row["task"],
        queue=row["queue"],
        at=row["at"],
        from_state=job_state(row["from_state"]) if row["from_state"] else None,
        to_state=job_state(row["to_state"]),
        reason=row["reason"],
        webhook=row["webhook"],
    )


async def feed_head(connection: Connection) -> FeedPosition:
    """The position of the newest readable event."""
    row = await connection.fetchrow(_HEAD)
    assert row is not None  # an aggregate always yields a row
    return FeedPosition(row["commit_id"], row["id"])


async def consumer_position(connection: Connection, consumer: str, now: int) -> FeedPosition:
    """Where the durable reader `consumer` is; a new one starts at the head of the feed."""
    await connection.execute(_START_CURSOR, consumer, now)
    row = await connection.fetchrow(
        "SELECT commit_id, event_id FROM feed_cursors WHERE consumer = $1", consumer
    )
    assert row is not None  # inserted just above if it was missing
    return FeedPosition(row["commit_id"], row["event_id"])


async def move_consumer(
    connection: Connection,
    consumer: str,
    expected: FeedPosition,
    to: FeedPosition,
    now: int,
    *,
    lazily: bool = False,
) -> bool:
    """Move `consumer` from `expected` to `to`; False if another reader moved it first.

    `lazily` (alone in its transaction, past events that called for nothing): without
    waiting for the commit to reach the disk (see `_MOVE_CURSOR_LAZILY`)."""
    statement = _MOVE_CURSOR_LAZILY if lazily else _MOVE_CURSOR
    status = await connection.execute(
        statement, to.commit, to.event_id, now, consumer, expected.commit, expected.event_id
    )
    return status == "UPDATE 1"


async def retention_floor(connection: Connection) -> FeedPosition | None:
    """The oldest position of any durable reader: events after it must be kept."""
    row = await connection.fetchrow(
        "SELECT commit_id, event_id FROM feed_cursors ORDER BY commit_id, event_id LIMIT 1"
    )
    return None if row is None else FeedPosition(row["commit_id"], row["event_id"])
