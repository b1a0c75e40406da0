"""The SQL of the PostgreSQL store: one statement per hot operation, one round trip each.

Every write that moves jobs is a single statement whose data-modifying CTEs also
write the attempt and event rows, so it commits atomically without an explicit
transaction. Batches travel as parallel arrays expanded by `unnest`. Statements that
may make a job claimable end with `wake`, a CTE calling `pg_notify` once when they
did; it commits (and is delivered) with the rows it announces. The final SELECT reads
it as `woken` only because PostgreSQL never runs a CTE that nothing reads.

Multi-row writes to running jobs (`heartbeat`, `finish`) walk their batch in job id
order, looking each job up by its primary key and locking it there: a subquery with a
locking clause, joined LATERAL, is one the planner can neither flatten nor reorder. So
two batches that share jobs always queue behind each other instead of deadlocking, and
the cost stays linear in the batch whatever the statistics say (a plan that joins the
batch to the table may otherwise unnest the whole batch again for every job).

The claim and the lease sweep skip locked rows and never wait: the claim reads its
candidates without locks, then locks them in claim order with SKIP LOCKED, passing over
those another claim holds (so of two claims in flight at once, the later may come back
short, and its worker claims again).

A job table's statistics are nearly always stale (its rows change state faster than
autovacuum analyzes them), and a plan misled by them reads a whole partial index on
every call. So statements leave the planner no cheaper-looking wrong path: they reach
jobs by id through `id = ANY (...)`, order by an index's own key, and write a state
test as `(state = ...) IS TRUE` where a partial index whose predicate a plain test
would match (`jobs_claim`, `jobs_leases`) must not be the way in.
"""

from __future__ import annotations

from backroom.store.postgres.lanes import LANE_ROOM
from backroom.store.postgres.queries import QUEUES_WITH_WORK

# -- submitting -----------------------------------------------------------------------

SUBMIT = """
WITH inserted AS (
    INSERT INTO jobs (tenant, task, queue, priority, state, input, max_attempts, timeout_ms,
                      run_at, created_at, updated_at, idempotency_key, fingerprint, metadata,
                      lane)
    SELECT tenant, task, queue, priority, 'queued', input, max_attempts, timeout_ms,
           run_at, $1::bigint, $1::bigint, idempotency_key, fingerprint, metadata, lane
    FROM unnest($4::text[], $5::text[], $6::text[], $7::integer[], $8::text[], $9::integer[],
                $10::bigint[], $11::bigint[], $12::text[], $13::text[], $14::text[],
                $15::text[])
         WITH ORDINALITY AS new (tenant, task, queue, priority, input, max_attempts, timeout_ms,
                                 run_at, idempotency_key, fingerprint, metadata, lane, position)
    -- Ids are drawn in this order, so sorting the returned rows by id restores it.
    ORDER BY position
    ON CONFLICT (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING id, tenant, idempotency_key, run_at
), submitted AS (
    INSERT INTO job_events (job_id, at, from_state, to_state, reason)
    SELECT id, $1, NULL, 'queued', $3 FROM inserted
), wake AS (
    SELECT pg_notify($2, '') WHERE EXISTS (SELECT FROM inserted WHERE run_at <= $1)
)
SELECT id, tenant, idempotency_key, (SELECT count(*) FROM wake) AS woken
FROM inserted ORDER BY id
"""
"""$1 now, $2 channel, $3 reason, $4.. one array per column of the new jobs: the ids
and keys of those inserted."""

LOCK_TENANTS = """
SELECT pg_advisory_xact_lock(hashtextextended('backroom.tenant:' || tenant, 0))
FROM unnest($1::text[]) AS tenant
"""
"""$1 tenants, sorted: each one's advisory lock until commit, taken in the order given so
that two submitters never wait for each other in a cycle."""

# -- claiming -------------------------------------------------------------------------

CLAIM = f"""
WITH RECURSIVE {{queue_order}},
{LANE_ROOM},
tenants (queue, queue_rank, tenant) AS (
    -- Each queue's tenants with queued jobs: one seek in `jobs_claim` per tenant (the
    -- ORDER BY is that index's, so no other index looks cheaper to the planner).
    SELECT queue, queue_rank,
           (SELECT tenant FROM jobs WHERE state = 'queued' AND queue = queue_order.queue
            ORDER BY tenant, priority DESC LIMIT 1)
    FROM queue_order
    UNION ALL
    SELECT queue, queue_rank,
           (SELECT tenant FROM jobs
            WHERE state = 'queued' AND queue = tenants.queue AND tenant > tenants.tenant
            ORDER BY tenant, priority DESC LIMIT 1)
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
          AND (lane IS NULL OR lane <> ALL (ARRAY(SELECT name FROM lane_room WHERE room = 0)))
        ORDER BY priority DESC, run_at, id
        LIMIT $2
    ) AS job
),
admitted AS (
    -- No more of a lane's jobs than it has room for (see `postgres_lanes.LANE_ROOM`).
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
    -- Lock in claim order, passing over jobs another claim holds (or just took).
    SELECT job.id, admitted.queue_rank, admitted.round
    FROM admitted JOIN jobs AS job ON job.id = admitted.id
    WHERE job.id = ANY (ARRAY(SELECT id FROM admitted)) AND (job.state = 'queued') IS TRUE
    ORDER BY admitted.queue_rank, admitted.priority DESC, admitted.round,
             admitted.run_at, admitted.id
    LIMIT $2
    FOR UPDATE OF job SKIP LOCKED
),
claimed AS (
    UPDATE jobs AS job
    SET state = 'running', attempt = job.attempt + 1, lease_token = job.lease_token + 1,
        lease_expires_at = $1 + $3::bigint, worker_id = $4, started_at = $1, updated_at = $1,
        cancel_requested = FALSE, lane_grant = NULL
    FROM picked WHERE job.id = picked.id
    RETURNING job.*, picked.queue_rank, picked.round
),
started AS (
    INSERT INTO attempts (job_id, number, lease_token, worker_id, started_at)
    SELECT id, attempt, lease_token, worker_id, started_at FROM claimed
),
moved AS (
    INSERT INTO job_events (job_id, at, from_state, to_state, reason)
    SELECT id, $1, 'queued', 'running', $5 FROM claimed
)
SELECT * FROM claimed ORDER BY queue_rank, priority DESC, round, run_at, id
"""
"""$1 now, $2 limit, $3 lease ms, $4 worker id, $5 reason; `{queue_order}` is
`LISTED_QUEUES` (naming $6) or `EVERY_QUEUE`.

Claim order: queue by queue; within a queue, priority (highest first), then round
robin among tenants, then due time, then id. Each tenant offers at most `limit`
candidates, so a tenant's backlog of 10,000 jobs costs a claim no more than `limit`.
A job of a lane that is paused or full is passed over, and no more of a lane's jobs
are taken than it has room for: the worker would only give them back unstarted.
"""

LISTED_QUEUES = """queue_order (queue, queue_rank) AS (
    SELECT queue, queue_rank FROM unnest($6::text[]) WITH ORDINALITY AS listed (queue, queue_rank)
)"""
"""The queues a worker names, served in the order it lists them."""

EVERY_QUEUE = f"""{QUEUES_WITH_WORK},
queue_order (queue, queue_rank) AS (
    -- `interactive` first and `batch` last, the rest by name in between.
    SELECT queue, row_number() OVER (
        ORDER BY queue <> 'interactive', queue = 'batch', queue COLLATE "C"
    )
    FROM queues WHERE queue IS NOT NULL
)"""
"""Every queue with queued jobs, in precedence order."""


# -- leases ---------------------------------------------------------------------------

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
UPDATE jobs AS job SET lease_expires_at = $1 + $2::bigint, updated_at = $1
FROM held WHERE job.id = held.id
RETURNING job.id, job.cancel_requested
"""
"""$1 now, $2 lease ms, $3 job ids, $4 their tokens: the leases still held."""

FINISH = """
WITH outcome AS (
    SELECT * FROM unnest(
        $3::bigint[], $4::bigint[], $5::boolean[], $6::boolean[], $7::text[], $8::text[],
        $9::boolean[], $10::text[], $11::text[], $12::bigint[], $13::bigint[], $14::integer[],
        $15::text[], $16::text[], $17::text[], $18::bigint[], $19::text[]
    ) AS outcome (job_id, token, when_spent, when_cancel_requested, state, result,
                  keeps_error, error_kind, error_message, run_at, finished_at, attempt_refund,
                  attempt_outcome, attempt_error_kind, attempt_error_message, next_attempt_at,
                  reason)
), held AS (
    -- An outcome whose write depends on the job's state comes once per case
    -- (`when_spent`, `when_cancel_requested`); the job's own columns pick one.
    SELECT job.id, outcome.* FROM (SELECT * FROM outcome ORDER BY job_id) AS outcome
    CROSS JOIN LATERAL (
        SELECT id FROM jobs AS job
        WHERE job.id = outcome.job_id AND job.lease_token = outcome.token
          AND (job.state = 'running') IS TRUE
          AND (outcome.when_spent IS NULL
               OR outcome.when_spent = (job.attempt >= job.max_attempts))
          AND (outcome.when_cancel_requested IS NULL
               OR outcome.when_cancel_requested = job.cancel_requested)
        FOR UPDATE
    ) AS job
), finished AS (
    UPDATE jobs AS job SET
        state = held.state,
        result = held.result,
        error_kind = CASE WHEN held.keeps_error THEN job.error_kind ELSE held.error_kind END,
        error_message =
            CASE WHEN held.keeps_error THEN job.error_message ELSE held.error_message END,
        run_at = COALESCE(held.run_at, job.run_at),
        finished_at = held.finished_at,
        attempt = job.attempt - held.attempt_refund,
        lease_expires_at = NULL, worker_id = NULL, updated_at = $1
    FROM held WHERE job.id = held.id
    RETURNING job.id, job.lease_token, job.state, job.run_at
), ended AS (
    UPDATE attempts AS attempt SET
        finished_at = $1, outcome = held.attempt_outcome,
        error_kind = held.attempt_error_kind, error_message = held.attempt_error_message,
        next_attempt_at = held.next_attempt_at
    FROM held WHERE attempt.job_id = held.id AND attempt.lease_token = held.token
), moved AS (
    INSERT INTO job_events (job_id, at, from_state, to_state, reason)
    SELECT id, $1, 'running', state, reason FROM held
), wake AS (
    SELECT pg_notify($2, '')
    WHERE EXISTS (SELECT FROM finished WHERE state = 'queued' AND run_at <= $1)
)
SELECT finished.id, finished.lease_token, (SELECT count(*) FROM wake) AS woken FROM finished
"""
"""$1 now, $2 channel, $3.. job ids, tokens, `when_spent`, `when_cancel_requested`, then
one array per `OutcomeWrite` field: the (id, lease token) of each job it applied to."""

EXPIRE_LEASES = """
WITH expired AS (
    SELECT id FROM jobs
    WHERE state = 'running' AND lease_expires_at <= $1
    ORDER BY lease_expires_at, id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
), swept AS (
    -- Back to the queue with the attempt used up; failed when it was the last one;
    -- cancelled when that was asked for while it ran (as core.transitions.expire).
    UPDATE jobs AS job SET
        state = CASE WHEN job.cancel_requested THEN 'cancelled'
                     WHEN job.attempt < job.max_attempts THEN 'queued' ELSE 'failed' END,
        run_at = CASE WHEN job.attempt < job.max_attempts AND NOT job.cancel_requested
                      THEN $1 ELSE job.run_at END,
        finished_at = CASE WHEN job.attempt < job.max_attempts AND NOT job.cancel_requested
                           THEN job.finished_at ELSE $1 END,
        error_kind = $4, error_message = $5,
        lease_expires_at = NULL, worker_id = NULL, updated_at = $1
    FROM expired WHERE job.id = expired.id
    RETURNING job.*
), ended AS (
    UPDATE attempts AS attempt SET
        finished_at = $1, outcome = 'lease_expired', error_kind = $4, error_message = $5,
        next_attempt_at = CASE WHEN swept.state = 'queued' THEN $1 END
    FROM swept WHERE attempt.job_id = swept.id AND attempt.lease_token = swept.lease_token
), moved AS (
    INSERT INTO job_events (job_id, at, from_state, to_state, reason)
    SELECT id, $1, 'running', state, $6 FROM swept
), wake AS (
    SELECT pg_notify($3, '') WHERE EXISTS (SELECT FROM swept WHERE state = 'queued')
)
SELECT swept.*, (SELECT count(*) FROM wake) AS woken FROM swept ORDER BY id
"""
"""$1 now, $2 limit, $3 channel, $4 error kind, $5 error message, $6 reason."""

# -- operator actions -----------------------------------------------------------------

REDRIVE = """
WITH picked AS (
    SELECT id FROM jobs
    WHERE state = 'failed'
      AND ($4::text IS NULL OR tenant = $4)
      AND ($5::text IS NULL OR task = $5)
      AND ($6::text IS NULL OR queue = $6)
      AND (cardinality($7::bigint[]) = 0 OR id = ANY($7::bigint[]))
    ORDER BY id
    FOR UPDATE
), redriven AS (
    UPDATE jobs AS job SET
        state = 'queued', attempt = 0, run_at = $1, finished_at = NULL,
        error_kind = NULL, error_message = NULL, cancel_requested = FALSE, updated_at = $1
    FROM picked WHERE job.id = picked.id
    RETURNING job.*
), moved AS (
    INSERT INTO job_events (job_id, at, from_state, to_state, reason)
    SELECT id, $1, 'failed', 'queued', $3 FROM redriven
), forgotten AS (
    -- A `once` effect begun but never recorded as done is what the person redriving
    -- has checked (OnceUncertain): it runs again.
    DELETE FROM once_records
    WHERE job_id = ANY (ARRAY(SELECT id FROM redriven)) AND NOT done
), wake AS (
    SELECT pg_notify($2, '') WHERE EXISTS (SELECT FROM redriven)
)
SELECT redriven.*, (SELECT count(*) FROM wake) AS woken FROM redriven ORDER BY id
"""
"""$1 now, $2 channel, $3 reason, $4 tenant, $5 task, $6 queue, $7 job ids (empty: any)."""

CANCEL = """
WITH target AS (
    SELECT id, state FROM jobs WHERE id = $1 AND ($3::text IS NULL OR tenant = $3) FOR UPDATE
), cancelled AS (
    -- A queued job is cancelled at once; a running one is flagged for its worker.
    UPDATE jobs AS job SET
        state = CASE WHEN target.state = 'queued' THEN 'cancelled' ELSE job.state END,
        finished_at = CASE WHEN target.state = 'queued' THEN $2 ELSE job.finished_at END,
        cancel_requested = job.cancel_requested OR target.state = 'running',
        updated_at = $2
    FROM target WHERE job.id = target.id AND target.state IN ('queued', 'running')
    RETURNING job.*
), moved AS (
    INSERT INTO job_events (job_id, at, from_state, to_state, reason)
    SELECT id, $2, 'queued', 'cancelled', $4 FROM cancelled WHERE state = 'cancelled'
)
SELECT * FROM cancelled
UNION ALL
-- A finished job is left as it is.
SELECT job.* FROM jobs AS job JOIN target USING (id)
WHERE target.state NOT IN ('queued', 'running')
"""
"""$1 job id, $2 now, $3 tenant (NULL: any), $4 reason: the job afterwards, if it exists."""
