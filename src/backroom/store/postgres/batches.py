"""Provider batches and offloaded jobs' lines on PostgreSQL (see `BatchStore`)."""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core.job import Job, Lease
from backroom.core.provider_batch import BatchCounts, HandOff, LineEnd, LineJob, ProviderBatch
from backroom.core.spend import CallOpening
from backroom.store.batch_rows import LINE_JOB_COLUMNS, line_job_from_row, provider_batch_from_row
from backroom.store.postgres import finish as finish_sql
from backroom.store.postgres.batch_hand_off import (
    OFFLOADED_RETURNING,
    STORE_OFFLOADED,
    hand_off_group,
)
from backroom.store.postgres.batch_settle import settle_lines
from backroom.store.postgres.part import PostgresPart
from backroom.store.rows import job_from_row

_OFFLOAD = f"""
WITH held AS (
    UPDATE jobs SET lease_expires_at = NULL, worker_id = NULL, updated_at = $1
    FROM jobs AS before
    WHERE jobs.id = $2 AND before.id = $2 AND jobs.lease_token = $3 AND jobs.state = 'running'
    RETURNING {OFFLOADED_RETURNING}
), {STORE_OFFLOADED}
INSERT INTO batch_lines (job_id, lease_token, lane, batch_id, handed_at)
SELECT id, lease_token, $4, NULL, $1 FROM held
ON CONFLICT (job_id, lease_token) DO NOTHING
RETURNING 1
"""

_INTENT = """
INSERT INTO provider_batches (name, provider, lane, phase, created_at, updated_at, due_at)
VALUES ($1, $2, $3, 'intent', $4, $4, $5)
RETURNING id
"""

_ASSIGN = """
UPDATE batch_lines AS line SET batch_id = $1
FROM unnest($2::bigint[], $3::bigint[]) AS lease (job_id, token), jobs
WHERE line.batch_id IS NULL AND line.job_id = lease.job_id AND line.lease_token = lease.token
  AND jobs.id = line.job_id AND jobs.lease_token = line.lease_token AND jobs.state = 'running'
RETURNING line.job_id, line.lease_token
"""

_TOTAL = "UPDATE provider_batches SET total = $1 WHERE id = $2 RETURNING *"

_SUBMITTED = """
UPDATE provider_batches SET phase = 'open', provider_batch_id = $1, updated_at = $2, due_at = $2
WHERE id = $3 AND phase = 'intent'
"""

_POLLED = """
UPDATE provider_batches
SET provider_status = $1, total = $2, succeeded = $3, failed = $4, polls = polls + 1,
    due_at = $5, updated_at = $6
WHERE id = $7 AND phase <> 'closed'
"""

_CLOSE = """
WITH closed AS (
    UPDATE provider_batches SET phase = 'closed', provider_status = $1, updated_at = $2
    WHERE id = $3 AND phase <> 'closed'
)
DELETE FROM batch_lines WHERE batch_id = $3
"""

_DUE = """
UPDATE provider_batches AS batch SET due_at = $1
FROM (SELECT id FROM provider_batches WHERE phase <> 'closed' AND due_at <= $2
      ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED) AS due
WHERE batch.id = due.id
RETURNING batch.*
"""

_OPEN = "SELECT * FROM provider_batches WHERE phase <> 'closed' ORDER BY id LIMIT $1"

_LIVE = """
SELECT jobs.* FROM batch_lines
JOIN jobs ON jobs.id = batch_lines.job_id AND jobs.lease_token = batch_lines.lease_token
         AND jobs.state = 'running'
"""

_CANCELS = """
WITH live AS (
    SELECT jobs.id, jobs.lease_token, jobs.attempt, jobs.cancel_requested FROM batch_lines
    JOIN jobs ON jobs.id = batch_lines.job_id AND jobs.lease_token = batch_lines.lease_token
             AND jobs.state = 'running'
    WHERE batch_lines.batch_id = $1
)
SELECT * FROM live WHERE cancel_requested
UNION ALL (SELECT * FROM live WHERE NOT cancel_requested LIMIT 1)
"""
"""The live jobs asked to cancel, and one other live job if there is one."""

_LINE_JOBS = f"""
SELECT {LINE_JOB_COLUMNS} FROM batch_lines JOIN jobs ON jobs.id = batch_lines.job_id
WHERE batch_lines.batch_id = $1 ORDER BY jobs.id
"""

_STRAY = (
    _LIVE
    + """ WHERE batch_lines.batch_id IS NULL AND batch_lines.handed_at < $1
ORDER BY batch_lines.handed_at LIMIT $2"""
)

_DROP_DEAD = """
DELETE FROM batch_lines WHERE batch_id IS NULL AND handed_at < $1
  AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = batch_lines.job_id
                  AND jobs.lease_token = batch_lines.lease_token AND jobs.state = 'running')
"""

_ADOPTED = """
SELECT provider_batch_id FROM provider_batches
WHERE provider = $1 AND created_at >= $2 AND provider_batch_id IS NOT NULL
"""

_JOB_BATCH = """
SELECT provider_batches.* FROM batch_lines
JOIN jobs ON jobs.id = batch_lines.job_id AND jobs.lease_token = batch_lines.lease_token
         AND jobs.state = 'running'
JOIN provider_batches ON provider_batches.id = batch_lines.batch_id
WHERE batch_lines.job_id = $1
"""


class PostgresBatches(PostgresPart):
    """Provider batches and offloaded jobs' lines (see `BatchStore`)."""

    async def offload(self, lease: Lease, lane: str, now: int) -> bool:
        """Hand the held job to batch offload: no lease expiry, no worker, a waiting line."""
        async with self._database.connection() as connection:
            done = await connection.fetchval(_OFFLOAD, now, lease.job_id, lease.token, lane)
            return done is not None

    async def batch_hand_off(
        self, hand_offs: Sequence[HandOff], now: int
    ) -> list[CallOpening | None]:
        """Open the calls of held jobs (within budgets) and offload them, in one transaction."""
        if not hand_offs:
            return []
        async with self._database.transaction() as connection:
            return await hand_off_group(connection, hand_offs, now)

    async def batch_create(
        self,
        name: str,
        provider: str,
        lane: str,
        leases: Sequence[Lease],
        now: int,
        hold_ms: int,
    ) -> tuple[ProviderBatch, list[Lease]]:
        """Store a batch intent holding the still waiting lines of `leases`."""
        ids = [lease.job_id for lease in leases]
        tokens = [lease.token for lease in leases]
        async with self._database.transaction() as connection:
            batch_id = await connection.fetchval(_INTENT, name, provider, lane, now, now + hold_ms)
            rows = await connection.fetch(_ASSIGN, batch_id, ids, tokens)
            held = {(row["job_id"], row["lease_token"]) for row in rows}
            row = await connection.fetchrow(_TOTAL, len(held), batch_id)
        assert row is not None  # the batch was inserted in this transaction
        kept = [lease for lease in leases if (lease.job_id, lease.token) in held]
        return provider_batch_from_row(row), kept

    async def batch_submitted(self, batch_id: int, provider_batch_id: str, now: int) -> None:
        """Store the provider's id: the batch is open, due for a poll now."""
        async with self._database.connection() as connection:
            await connection.execute(_SUBMITTED, provider_batch_id, now, batch_id)

    async def batch_polled(
        self, batch_id: int, status: str, counts: BatchCounts, due_at: int, now: int
    ) -> None:
        """Store what a poll saw and when the batch is next due."""
        tally = (counts.total, counts.succeeded, counts.failed)
        async with self._database.connection() as connection:
            await connection.execute(_POLLED, status, *tally, due_at, now, batch_id)

    async def batch_finish(self, ends: Sequence[LineEnd], now: int) -> list[bool]:
        """Settle the ends' calls and apply their outcomes, in one transaction."""
        if not ends:
            return []
        results = [(end.lease, end.outcome) for end in ends if end.outcome is not None]
        async with self._database.transaction() as connection:
            await settle_lines(connection, ends, now)
            applied = await finish_sql.finish(connection, results, now, self._channel, hinted=True)
        if any(applied):  # committed without NOTIFY's lock: the feed is woken after
            self._feed_hint.send()
        flags = iter(applied)
        return [end.outcome is not None and next(flags) for end in ends]

    async def batch_close(self, batch_id: int, status: str, now: int) -> None:
        """Close the batch; its lines go with it."""
        async with self._database.connection() as connection:
            await connection.execute(_CLOSE, status, now, batch_id)

    async def batches_due(self, now: int, hold_ms: int, limit: int) -> list[ProviderBatch]:
        """Take up to `limit` due batches, pushing their `due_at` past the hold."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_DUE, now + hold_ms, now, limit)
        return sorted((provider_batch_from_row(row) for row in rows), key=lambda b: b.id)

    async def provider_batches(self, limit: int = 100) -> list[ProviderBatch]:
        """The batches not closed, oldest first."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_OPEN, limit)
        return [provider_batch_from_row(row) for row in rows]

    async def batch_cancels(self, batch_id: int) -> tuple[list[Lease], bool]:
        """The batch's live jobs asked to cancel, and whether other live jobs are left."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_CANCELS, batch_id)
        asked = [row for row in rows if row["cancel_requested"]]
        leases = [Lease(row["id"], row["lease_token"], row["attempt"]) for row in asked]
        return leases, len(asked) < len(rows)

    async def batch_line_jobs(self, batch_id: int) -> list[LineJob]:
        """Each line of the batch with its job, whatever the job's state."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_LINE_JOBS, batch_id)
        return [line_job_from_row(row) for row in rows]

    async def stray_jobs(self, handed_before: int, limit: int) -> list[Job]:
        """Running jobs whose waiting line was handed before `handed_before`."""
        async with self._database.transaction() as connection:
            await connection.execute(_DROP_DEAD, handed_before)
            rows = await connection.fetch(_STRAY, handed_before, limit)
        return [job_from_row(row) for row in rows]

    async def adopted_batch_ids(self, provider: str, since: int) -> set[str]:
        """The provider ids stored by `provider`'s batches stored since `since`."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(_ADOPTED, provider, since)
        return {row["provider_batch_id"] for row in rows}

    async def job_batch(self, job_id: int) -> ProviderBatch | None:
        """The batch holding the running job's line, or None."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(_JOB_BATCH, job_id)
        return None if row is None else provider_batch_from_row(row)
