"""Leases on PostgreSQL: claiming due jobs and extending the leases workers hold.

A claim is one statement that also logs the transitions. It opens the attempts in the
job rows alone (worker, lease token, start, lane): an attempt's row is written when it
ends (`postgres.finish`). It reads its candidates without locks, then locks them in
claim order with SKIP LOCKED, passing over those another claim holds (it reads twice
as many candidates as it takes, so that a claim in flight beside another comes back
full). Claim order: queue by queue; within a queue, priority (highest first), then
round robin among tenants, then due time, then id. A paused queue is not claimed
from; a job of a lane that is paused or full is passed over, and no more of a lane's
jobs are taken than it has room for: the worker would only give them back unstarted.

A heartbeat walks its batch in job id order, locking each job by its primary key, so
two batches that share jobs queue behind each other instead of deadlocking. Lease
sweeps end attempts, so they are in `postgres.finish`; each sweep also starts, beside it, a
refresh of the planner's statistics where autovacuum is off (`postgres.upkeep`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from backroom.core import transitions
from backroom.core.job import Job, Lease
from backroom.core.outcome import Outcome
from backroom.store.postgres import finish as finish_sql
from backroom.store.postgres import queries
from backroom.store.postgres.database import PooledConnection
from backroom.store.postgres.history import RECORD_TRANSITIONS_HINTED
from backroom.store.postgres.lanes import LANE_ROOM
from backroom.store.postgres.part import PostgresPart
from backroom.store.postgres.pauses import PAUSED_LANES, PAUSED_QUEUES
from backroom.store.postgres.queries import QUEUES_WITH_WORK
from backroom.store.records import HeartbeatResult
from backroom.store.rows import job_from_row

CLAIM = f"""
WITH RECURSIVE {{queue_order}},
{LANE_ROOM},
tenants (queue, queue_rank, tenant) AS (
    -- Each queue's tenants with queued jobs: one seek per tenant. Ordered by tenant
    -- alone, which `jobs_claim` and `jobs_depth` both hold in order, so whichever the
    -- planner takes stops at its first entry: ordered by (tenant, priority DESC), an
    -- unanalyzed table (autovacuum off) had it read and sort every queued job instead.
    SELECT queue, queue_rank,
           (SELECT tenant FROM jobs WHERE state = 'queued' AND queue = queue_order.queue
            ORDER BY tenant LIMIT 1)
    FROM queue_order
    UNION ALL
    SELECT queue, queue_rank,
           (SELECT tenant FROM jobs
            WHERE state = 'queued' AND queue = tenants.queue AND tenant > tenants.tenant
            ORDER BY tenant LIMIT 1)
    FROM tenants WHERE tenant IS NOT NULL
),
candidates AS (
    -- Each tenant's first due jobs outside closed lanes, numbered into rounds within a
    -- priority.
    SELECT tenants.queue_rank, job.id, job.priority, job.run_at, job.lane,
           row_number() OVER (PARTITION BY tenants.queue_rank, tenants.tenant, job.priority
                              ORDER BY job.run_at, job.id) AS round
    FROM tenants
    CROSS JOIN LATERAL (
        SELECT id, priority, run_at, lane FROM jobs
        WHERE state = 'queued' AND queue = tenants.queue AND tenant = tenants.tenant
          AND run_at <= $1
          AND ($6::text[] IS NULL OR task = ANY ($6::text[]))
          AND (lane IS NULL OR lane <> ALL (ARRAY(SELECT name FROM lane_room WHERE room = 0)))
          AND (lane IS NULL OR lane <> ALL (ARRAY({PAUSED_LANES})))
        ORDER BY priority DESC, run_at, id
        LIMIT (SELECT $2 * 2)
    ) AS job
),
admitted AS (
    -- No more of a lane's jobs than it has room for (see `postgres.lanes.LANE_ROOM`).
    SELECT ranked.* FROM (
        SELECT candidates.*,
               row_number() OVER (PARTITION BY candidates.lane
                                  ORDER BY queue_rank, priority DESC, round, run_at, id)
                   AS lane_rank
        FROM candidates
    ) AS ranked
    LEFT JOIN lane_room ON lane_room.name = ranked.lane
    WHERE lane_room.room IS NULL OR ranked.lane_rank <= lane_room.room
),
picked AS (
    -- Lock in claim order, passing over jobs another claim holds (or just took), one
    -- candidate at a time by key, up to `limit`: the rest are never read again.
    SELECT job.id, admitted.queue_rank, admitted.round
    FROM (SELECT * FROM admitted
          ORDER BY queue_rank, priority DESC, round, run_at, id) AS admitted
    CROSS JOIN LATERAL (
        SELECT id FROM jobs AS job
        WHERE job.id = admitted.id AND (job.state = 'queued') IS TRUE
        FOR UPDATE SKIP LOCKED
    ) AS job
    LIMIT (SELECT $2)
),
claimed AS (
    -- The ids as an array too, so that the jobs are found by primary key: joined to
    -- `picked` alone (estimated at any size), the planner read the whole table.
    UPDATE jobs AS job
    SET state = 'running', attempt = job.attempt + 1, lease_token = job.lease_token + 1,
        lease_expires_at = $3, worker_id = $4, started_at = $1, updated_at = $1,
        cancel_requested = FALSE, lane_grant = NULL
    FROM picked WHERE job.id = picked.id AND job.id = ANY (ARRAY(SELECT id FROM picked))
    RETURNING job.*, picked.queue_rank, picked.round
),
moves AS (
    SELECT id AS job_id, $1::bigint AS at, 'queued' AS from_state, state AS to_state,
           $5::text AS reason
    FROM claimed
),
{RECORD_TRANSITIONS_HINTED}
SELECT * FROM claimed ORDER BY queue_rank, priority DESC, round, run_at, id
"""
"""$1 now, $2 limit, $3 lease expiry, $4 worker id, $5 reason, $6 the worker's tasks
(NULL: any task); `{queue_order}` is `LISTED_QUEUES` (naming $7) or `EVERY_QUEUE`.

The limits are subqueries (`LIMIT (SELECT $2)`), not estimated from the call's value,
so a connection keeps one plan after five calls: with the value estimated, a small claim
looked cheaper planned for itself and was planned at each call (1-2 ms, more than it ran).

A job of a task the worker lacks stays queued for a worker that has it; each tenant's
candidates are read past such jobs, so a backlog of them slows the claim a little.

Claim order: queue by queue; within a queue, priority (highest first), then round
robin among tenants, then due time, then id. Each tenant offers at most 2 x `limit`
candidates, so a tenant's backlog of 10,000 jobs costs a claim no more than that: a
claim in flight in another process holds the first `limit` of them until it commits,
and a claim that read only as many would pass over all of them and come back empty
(two processes claimed in turn, slower than one). Each candidate read is sorted twice
(tenant rounds, lane room), so reading more costs every claim: at 4 x `limit`, 2
worker processes ran 3-11% slower (10,000 and 40,000 no-op jobs; 1 process 2% slower,
4 processes level). A third claim in flight at the same moment may come back short,
and its worker claims again as soon as it is done (`_MIN_WAIT_MS` in runtime/worker.py).
A job of a lane that is paused or full is passed over, and no more of a lane's jobs
are taken than it has room for: the worker would only give them back unstarted.
"""

LISTED_QUEUES = f"""queue_order (queue, queue_rank) AS (
    SELECT queue, queue_rank FROM unnest($7::text[]) WITH ORDINALITY AS listed (queue, queue_rank)
    WHERE queue <> ALL (ARRAY({PAUSED_QUEUES}))
)"""
"""The queues a worker names and nobody paused, served in the order it lists them."""

EVERY_QUEUE = f"""{QUEUES_WITH_WORK},
queue_order (queue, queue_rank) AS (
    -- `interactive` first and `batch` last, the rest by name in between.
    SELECT queue, row_number() OVER (
        ORDER BY queue <> 'interactive', queue = 'batch', queue COLLATE "C"
    )
    FROM queues WHERE queue IS NOT NULL AND queue <> ALL (ARRAY({PAUSED_QUEUES}))
)"""
"""Every queue with queued jobs that nobody paused, in precedence order."""


HEARTBEAT = """
WITH held AS (
    SELECT job.id
    FROM (SELECT * FROM unnest($3::bigint[], $4::bigint[]) AS lease (job_id, token)
          ORDER BY job_id) AS lease
    CROSS JOIN LATERAL (
        SELECT id FROM jobs AS job
        WHERE job.id = lease.job_id AND job.lease_token = lease.token
          AND (job.state = 'running') IS TRUE
        FOR UPDATE
    ) AS job
)
UPDATE jobs AS job
SET lease_expires_at = CASE WHEN job.worker_id IS NULL THEN NULL ELSE $1 + $2::bigint END,
    updated_at = $1
FROM held WHERE job.id = held.id
RETURNING job.id, job.cancel_requested
"""
"""$1 now, $2 lease ms, $3 job ids, $4 their tokens: the leases still held."""


async def _claim(
    connection: PooledConnection,
    queues: Sequence[str],
    limit: int,
    worker_id: str,
    lease_ms: int,
    now: int,
    tasks: Sequence[str] | None = None,
) -> list[Job]:
    """Take up to `limit` due queued jobs of `tasks` (None: any) from `queues` (all queues
    if empty), in claim order."""
    transition = transitions.claimed(now, worker_id, lease_ms)
    lease = transition.granted_lease()
    queue_order, queue_arguments = (LISTED_QUEUES, [list(queues)]) if queues else (EVERY_QUEUE, [])
    rows = await connection.fetch(
        CLAIM.format(queue_order=queue_order),
        transition.at,
        limit,
        lease.expires_at,
        lease.worker_id,
        transition.reason,
        None if tasks is None else list(tasks),
        *queue_arguments,
    )
    return [job_from_row(row) for row in rows]


async def _heartbeat(
    connection: PooledConnection, leases: Sequence[Lease], lease_ms: int, now: int
) -> HeartbeatResult:
    """Extend every lease still held; report the lost ones and pending cancellations."""
    rows = await connection.fetch(
        HEARTBEAT,
        now,
        lease_ms,
        [lease.job_id for lease in leases],
        [lease.token for lease in leases],
    )
    return HeartbeatResult(
        lost=frozenset(lease.job_id for lease in leases) - {row["id"] for row in rows},
        cancel_requested=frozenset(row["id"] for row in rows if row["cancel_requested"]),
    )


class PostgresLeases(PostgresPart):
    """Claiming jobs and ending their attempts under leases (see `LeaseStore`)."""

    async def claim(
        self,
        queues: Sequence[str],
        limit: int,
        worker_id: str,
        lease_ms: int,
        now: int,
        tasks: Collection[str] | None = None,
    ) -> list[Job]:
        """Take up to `limit` due queued jobs of `tasks` (None: any) from `queues` (all
        queues if empty)."""
        if limit <= 0 or (tasks is not None and not tasks):
            return []
        names = tuple(queues)
        chosen = None if tasks is None else tuple(sorted(tasks))
        # Planned with jit off: JIT compiling the claim costs far more than it runs. On
        # the claim's own session, where its plan is made once (`claim_session`).
        async with self._claims.connection() as connection:
            jobs = await _claim(connection, names, limit, worker_id, lease_ms, now, chosen)
        if jobs:
            self._feed_hint.send()  # committed: the claim's statement did not notify
        return jobs

    async def heartbeat(self, leases: Sequence[Lease], lease_ms: int, now: int) -> HeartbeatResult:
        """Extend the leases still held; report the lost ones and pending cancellations."""
        if not leases:
            return HeartbeatResult()
        async with self._database.connection() as connection:
            return await _heartbeat(connection, leases, lease_ms, now)

    async def finish(self, results: Sequence[tuple[Lease, Outcome]], now: int) -> list[bool]:
        """Apply each attempt's outcome if its lease is still held; True where applied."""
        if not results:
            return []
        async with self._database.connection() as connection:
            applied = await finish_sql.finish(connection, results, now, self._channel, hinted=True)
        if any(applied):
            self._feed_hint.send()
        return applied

    async def expire_leases(self, now: int, limit: int = 1000) -> list[Job]:
        """Return jobs whose lease expired to the queue (an attempt used) or fail them."""
        async with self._database.connection() as connection:
            swept = await finish_sql.expire_leases(connection, now, limit, self._channel)
        if swept:
            self._feed_hint.send()
        self._statistics.start()  # where autovacuum is off; beside, not awaited
        return swept

    async def next_wakeup(
        self, queues: Sequence[str], tasks: Collection[str] | None = None
    ) -> int | None:
        """The earliest queued due time or running lease expiry in `queues` of `tasks`."""
        wanted = None if tasks is None else sorted(tasks)
        # Asked by the claim loop after a claim, so on the claims' session: planned for
        # each call it took 1.2-2.1 ms, with the plan made once 0.2-0.6 ms.
        async with self._claims.connection() as connection:
            wakeup: int | None = await connection.fetchval(
                queries.NEXT_WAKEUP, list(queues) or None, wanted
            )
        return wakeup

    def on_new_work(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the event loop whenever any process may have queued work.

        It is also called each time listening starts or resumes after a lost connection,
        since work queued before then went unheard. The first registration starts
        listening, so it must be made on a running loop. Through a transaction pooler with
        no listen URL nothing listens: workers find new work by polling.
        """
        self._listener.add(callback)

    def commit_watch(self) -> Callable[[], bool] | None:
        """None: LISTEN/NOTIFY tells `on_new_work` of every process's new work."""
        return None
