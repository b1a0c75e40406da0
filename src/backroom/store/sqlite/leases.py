"""Leases on SQLite: claiming due jobs, extending leases, sweeping expired ones (`SqliteLeases`).

A claim adds one to the job's `lease_token`, which never goes back: every later write
from a worker names the token it was given, and a write naming an older one changes
nothing. Each claim is one `UPDATE ... WHERE id IN (SELECT ... LIMIT n)` per queue,
run under the write lock, so two workers can never both take a job.

Claim order: queue by queue in the order the worker lists them (all queues:
`interactive` first, `batch` last); within a queue, priority (highest first), then
round robin among tenants, then due time, then id. The round robin reads at most
`limit` candidates per tenant through the `jobs_claim` index, so a tenant's backlog
of 10,000 jobs costs a claim no more than a backlog of `limit`.

A paused queue is not claimed from (see `sqlite.pauses`). A job in a lane (see
`sqlite.lanes`) is passed over while its lane is paused or has no free slot, and one
claim takes no more of a lane's jobs than the lane has room for: those jobs would only
be given back, unstarted, by the worker's lane check.

A worker names the tasks it has: a job of another task stays queued for a worker that
has it (each tenant's candidates are read past such jobs, at a small cost per job).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence

from backroom.core import transitions
from backroom.core.job import Job, JobState, Lease
from backroom.core.lifecycle import RunningFacts
from backroom.core.outcome import Outcome
from backroom.store.claim_order import in_claim_order, queue_precedence
from backroom.store.records import HeartbeatResult
from backroom.store.rows import dump_json, job_from_row
from backroom.store.sqlite import finish as finish_sql
from backroom.store.sqlite import queries
from backroom.store.sqlite.finish import end_attempts
from backroom.store.sqlite.history import open_attempts, record_transitions
from backroom.store.sqlite.lanes import LANE_ROOM
from backroom.store.sqlite.part import SqlitePart
from backroom.store.sqlite.pauses import paused_queues

# Distinct tenants through the index (one seek each), then each tenant's first
# `limit` due jobs outside closed lanes; `round` numbers a tenant's jobs within one
# priority, `lane_rank` a lane's jobs in claim order, which `lane_room` caps.
_CLAIM = f"""
WITH RECURSIVE tenants (name) AS (
    SELECT MIN(tenant) FROM jobs WHERE state = 'queued' AND queue = :queue
    UNION ALL
    SELECT (SELECT MIN(tenant) FROM jobs
            WHERE state = 'queued' AND queue = :queue AND tenant > tenants.name)
    FROM tenants WHERE name IS NOT NULL
),
{LANE_ROOM},
candidates AS (
    SELECT job.id, job.priority, job.run_at, job.lane,
           ROW_NUMBER() OVER (PARTITION BY job.tenant, job.priority
                              ORDER BY job.run_at, job.id) AS round
    FROM tenants JOIN jobs AS job ON job.id IN (
        SELECT id FROM jobs
        WHERE state = 'queued' AND queue = :queue AND tenant = tenants.name
          AND run_at <= :now
          AND (:any_task OR task IN (SELECT value FROM json_each(:tasks)))
          AND (lane IS NULL OR lane NOT IN (SELECT name FROM lane_room WHERE room = 0))
          AND (lane IS NULL OR lane NOT IN (SELECT name FROM pauses WHERE kind = 'lane'))
        ORDER BY priority DESC, run_at, id
        LIMIT :limit
    )
),
ranked AS (
    SELECT id, priority, round, run_at, lane,
           ROW_NUMBER() OVER (PARTITION BY lane ORDER BY priority DESC, round, run_at, id)
               AS lane_rank
    FROM candidates
)
UPDATE jobs
SET state = 'running', attempt = attempt + 1, lease_token = lease_token + 1,
    lease_expires_at = :expires, worker_id = :worker, started_at = :now, updated_at = :now,
    cancel_requested = 0, lane_grant = NULL
WHERE id IN (
    SELECT id FROM ranked LEFT JOIN lane_room ON lane_room.name = ranked.lane
    WHERE lane_room.room IS NULL OR ranked.lane_rank <= lane_room.room
    ORDER BY priority DESC, round, run_at, id
    LIMIT :limit
)
RETURNING *
"""

# Distinct queues with queued jobs, one index seek each.
_QUEUES = """
WITH RECURSIVE queues (name) AS (
    SELECT MIN(queue) FROM jobs WHERE state = 'queued'
    UNION ALL
    SELECT (SELECT MIN(queue) FROM jobs WHERE state = 'queued' AND queue > queues.name)
    FROM queues WHERE name IS NOT NULL
)
SELECT name FROM queues WHERE name IS NOT NULL
"""

_HEARTBEAT = """
UPDATE jobs
SET lease_expires_at = CASE WHEN worker_id IS NULL THEN NULL ELSE ? END, updated_at = ?
WHERE state = 'running'
  AND (id, lease_token) IN (
      SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)
  )
RETURNING id, cancel_requested
"""

_EXPIRED = """
SELECT id, lease_token, attempt >= max_attempts AS spent, cancel_requested FROM jobs
WHERE state = 'running' AND lease_expires_at <= ?
ORDER BY lease_expires_at, id
LIMIT ?
"""

_JOBS = "SELECT * FROM jobs WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id"


def queue_order(connection: sqlite3.Connection, queues: Sequence[str]) -> list[str]:
    """The queues to claim from, in order: as listed, or every queue with queued jobs,
    `interactive` first and `batch` last; never a paused one."""
    paused = paused_queues(connection)
    if queues:
        return [queue for queue in queues if queue not in paused]
    return queue_precedence(row[0] for row in connection.execute(_QUEUES) if row[0] not in paused)


def _claim(
    connection: sqlite3.Connection,
    queues: Sequence[str],
    limit: int,
    worker_id: str,
    lease_ms: int,
    now: int,
    tasks: Sequence[str] | None = None,
) -> list[Job]:
    """Take up to `limit` due queued jobs of `tasks` (None: any) from `queues` under fresh
    leases, in claim order."""
    transition = transitions.claimed(now, worker_id, lease_ms)
    lease = transition.granted_lease()
    claimed: list[Job] = []
    for queue in queue_order(connection, queues):
        parameters = {
            "queue": queue,
            "now": now,
            "limit": limit - len(claimed),
            "expires": lease.expires_at,
            "worker": lease.worker_id,
            "any_task": tasks is None,
            "tasks": dump_json(list(tasks or ())),
        }
        rows = connection.execute(_CLAIM, parameters).fetchall()
        # RETURNING gives rows in no promised order.
        claimed += in_claim_order(job_from_row(row) for row in rows)
        if len(claimed) == limit:
            break
    open_attempts(connection, claimed)
    record_transitions(connection, ((job.id, transition) for job in claimed))
    return claimed


def _heartbeat(
    connection: sqlite3.Connection, leases: Sequence[Lease], lease_ms: int, now: int
) -> HeartbeatResult:
    """Extend every lease still held; report the lost ones and pending cancellations."""
    held = dump_json([[lease.job_id, lease.token] for lease in leases])
    rows = connection.execute(_HEARTBEAT, (now + lease_ms, now, held)).fetchall()
    extended = {row["id"] for row in rows}
    return HeartbeatResult(
        lost=frozenset(lease.job_id for lease in leases) - extended,
        cancel_requested=frozenset(row["id"] for row in rows if row["cancel_requested"]),
    )


def _expire_leases(connection: sqlite3.Connection, now: int, limit: int) -> list[Job]:
    """Requeue (or fail, with no attempts left) up to `limit` jobs whose lease ran out."""
    ended = [
        (
            row["id"],
            row["lease_token"],
            transitions.expired(
                now, RunningFacts(bool(row["spent"]), bool(row["cancel_requested"]))
            ),
        )
        for row in connection.execute(_EXPIRED, (now, limit))
    ]
    if not ended:
        return []
    end_attempts(connection, ended)
    job_ids = dump_json([job_id for job_id, _, _ in ended])
    return [job_from_row(row) for row in connection.execute(_JOBS, (job_ids,))]


class SqliteLeases(SqlitePart):
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
        return await self._database.write(
            lambda connection: _claim(connection, names, limit, worker_id, lease_ms, now, chosen)
        )

    async def heartbeat(self, leases: Sequence[Lease], lease_ms: int, now: int) -> HeartbeatResult:
        """Extend the leases still held; report the lost ones and pending cancellations."""
        if not leases:
            return HeartbeatResult()
        held = tuple(leases)
        return await self._database.write(
            lambda connection: _heartbeat(connection, held, lease_ms, now)
        )

    async def finish(self, results: Sequence[tuple[Lease, Outcome]], now: int) -> list[bool]:
        """Apply each attempt's outcome if its lease is still held; True where applied."""
        if not results:
            return []
        batch = tuple(results)
        applied = await self._database.write(
            lambda connection: finish_sql.finish(connection, batch, now)
        )
        if any(transition and transition.target is JobState.QUEUED for transition in applied):
            self._new_work.announce()
        return [transition is not None for transition in applied]

    async def expire_leases(self, now: int, limit: int = 1000) -> list[Job]:
        """Return jobs whose lease expired to the queue (an attempt used) or fail them."""
        expired = await self._database.write(
            lambda connection: _expire_leases(connection, now, limit)
        )
        if any(job.state is JobState.QUEUED for job in expired):
            self._new_work.announce()
        return expired

    async def next_wakeup(
        self, queues: Sequence[str], tasks: Collection[str] | None = None
    ) -> int | None:
        """The earliest queued due time or running lease expiry in `queues` of `tasks`."""
        names = tuple(queues)
        chosen = None if tasks is None else tuple(sorted(tasks))
        return await self._database.read(
            lambda connection: queries.next_wakeup(connection, names, chosen)
        )

    def on_new_work(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the event loop after this store, or another process on the
        file, queues claimable work (the latter by datagram: see `WakeSockets`). The
        first registration starts listening, so it must be made on a running loop."""
        self._new_work.add(callback)
        if self._wake_sockets is not None:
            self._wake_sockets.listen(callback)

    def commit_watch(self) -> Callable[[], bool] | None:
        """A `PRAGMA data_version` check on a connection of its own (see `CommitWatch`);
        None for a private `:memory:` database."""
        return self._commit_watch
