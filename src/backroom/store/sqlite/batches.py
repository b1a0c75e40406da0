"""Provider batches and offloaded jobs' lines on SQLite (see `BatchStore`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from backroom.core.errors import LeaseLost
from backroom.core.job import Job, JobState, Lease
from backroom.core.lifecycle import Transition
from backroom.core.provider_batch import BatchCounts, HandOff, LineEnd, LineJob, ProviderBatch
from backroom.core.spend import CallOpening
from backroom.store.batch_rows import LINE_JOB_COLUMNS, line_job_from_row, provider_batch_from_row
from backroom.store.rows import dump_json, job_from_row
from backroom.store.sqlite import finish as finish_sql
from backroom.store.sqlite.batch_settle import settle_lines
from backroom.store.sqlite.calls import open_call
from backroom.store.sqlite.part import SqlitePart

_OFFLOAD = """
UPDATE jobs SET lease_expires_at = NULL, worker_id = NULL, updated_at = ?
WHERE id = ? AND lease_token = ? AND state = 'running'
"""

_LINE = """
INSERT INTO batch_lines (job_id, lease_token, lane, batch_id, handed_at) VALUES (?, ?, ?, NULL, ?)
ON CONFLICT (job_id, lease_token) DO NOTHING
"""

_INTENT = """
INSERT INTO provider_batches (name, provider, lane, phase, created_at, updated_at, due_at)
VALUES (?, ?, ?, 'intent', ?, ?, ?)
RETURNING *
"""

_ASSIGN = """
UPDATE batch_lines SET batch_id = :batch
WHERE batch_id IS NULL
  AND (job_id, lease_token) IN (
      SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(:leases)
  )
  AND EXISTS (SELECT 1 FROM jobs WHERE jobs.id = batch_lines.job_id
              AND jobs.lease_token = batch_lines.lease_token AND jobs.state = 'running')
RETURNING job_id, lease_token
"""

_TOTAL = "UPDATE provider_batches SET total = ? WHERE id = ? RETURNING *"

_SUBMITTED = """
UPDATE provider_batches SET phase = 'open', provider_batch_id = ?, updated_at = ?, due_at = ?
WHERE id = ? AND phase = 'intent'
"""

_POLLED = """
UPDATE provider_batches
SET provider_status = ?, total = ?, succeeded = ?, failed = ?, polls = polls + 1,
    due_at = ?, updated_at = ?
WHERE id = ? AND phase <> 'closed'
"""

_CLOSE = """
UPDATE provider_batches SET phase = 'closed', provider_status = ?, updated_at = ?
WHERE id = ? AND phase <> 'closed'
"""

_DROP_LINES = "DELETE FROM batch_lines WHERE batch_id = ?"

_DUE = """
UPDATE provider_batches SET due_at = :held
WHERE id IN (SELECT id FROM provider_batches WHERE phase <> 'closed' AND due_at <= :now
             ORDER BY due_at LIMIT :limit)
RETURNING *
"""

_OPEN = "SELECT * FROM provider_batches WHERE phase <> 'closed' ORDER BY id LIMIT ?"

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
    WHERE batch_lines.batch_id = ?
)
SELECT * FROM live WHERE cancel_requested
UNION ALL SELECT * FROM (SELECT * FROM live WHERE NOT cancel_requested LIMIT 1)
"""
"""The live jobs asked to cancel, and one other live job if there is one."""

_LINE_JOBS = f"""
SELECT {LINE_JOB_COLUMNS} FROM batch_lines JOIN jobs ON jobs.id = batch_lines.job_id
WHERE batch_lines.batch_id = ? ORDER BY jobs.id
"""

_STRAY = (
    _LIVE
    + """ WHERE batch_lines.batch_id IS NULL AND batch_lines.handed_at < ?
ORDER BY batch_lines.handed_at LIMIT ?"""
)

_DROP_DEAD = """
DELETE FROM batch_lines WHERE batch_id IS NULL AND handed_at < ?
  AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = batch_lines.job_id
                  AND jobs.lease_token = batch_lines.lease_token AND jobs.state = 'running')
"""

_ADOPTED = """
SELECT provider_batch_id FROM provider_batches
WHERE provider = ? AND created_at >= ? AND provider_batch_id IS NOT NULL
"""

_JOB_BATCH = """
SELECT provider_batches.* FROM batch_lines
JOIN jobs ON jobs.id = batch_lines.job_id AND jobs.lease_token = batch_lines.lease_token
         AND jobs.state = 'running'
JOIN provider_batches ON provider_batches.id = batch_lines.batch_id
WHERE batch_lines.job_id = ?
"""


def _offload(connection: sqlite3.Connection, lease: Lease, lane: str, now: int) -> bool:
    held = connection.execute(_OFFLOAD, (now, lease.job_id, lease.token))
    if not held.rowcount:
        return False
    connection.execute(_LINE, (lease.job_id, lease.token, lane, now))
    return True


def _hand_off(
    connection: sqlite3.Connection, hand_offs: Sequence[HandOff], now: int
) -> list[CallOpening | None]:
    results: list[CallOpening | None] = []
    for hand_off in hand_offs:
        try:
            opening = open_call(connection, hand_off.lease, hand_off.intent, hand_off.budget)
        except LeaseLost:
            results.append(None)
            continue
        if opening.opened:
            _offload(connection, hand_off.lease, hand_off.lane, now)
        results.append(opening)
    return results


def _create(
    connection: sqlite3.Connection,
    batch: tuple[str, str, str],
    leases: Sequence[Lease],
    now: int,
    hold_ms: int,
) -> tuple[ProviderBatch, list[Lease]]:
    row = connection.execute(_INTENT, (*batch, now, now, now + hold_ms)).fetchone()
    pairs = dump_json([[lease.job_id, lease.token] for lease in leases])
    held = {
        (line["job_id"], line["lease_token"])
        for line in connection.execute(_ASSIGN, {"batch": row["id"], "leases": pairs})
    }
    row = connection.execute(_TOTAL, (len(held), row["id"])).fetchone()
    kept = [lease for lease in leases if (lease.job_id, lease.token) in held]
    return provider_batch_from_row(row), kept


def _finish(
    connection: sqlite3.Connection, ends: Sequence[LineEnd], now: int
) -> list[Transition | None]:
    settle_lines(connection, ends, now)
    results = [(end.lease, end.outcome) for end in ends if end.outcome is not None]
    applied = iter(finish_sql.finish(connection, results, now))
    return [None if end.outcome is None else next(applied) for end in ends]


def _close(connection: sqlite3.Connection, batch_id: int, status: str, now: int) -> None:
    connection.execute(_CLOSE, (status, now, batch_id))
    connection.execute(_DROP_LINES, (batch_id,))


def _stray(connection: sqlite3.Connection, handed_before: int, limit: int) -> list[Job]:
    connection.execute(_DROP_DEAD, (handed_before,))
    return [job_from_row(row) for row in connection.execute(_STRAY, (handed_before, limit))]


class SqliteBatches(SqlitePart):
    """Provider batches and offloaded jobs' lines (see `BatchStore`)."""

    async def offload(self, lease: Lease, lane: str, now: int) -> bool:
        """Hand the held job to batch offload: no lease expiry, no worker, a waiting line."""
        return await self._database.write(lambda connection: _offload(connection, lease, lane, now))

    async def batch_hand_off(
        self, hand_offs: Sequence[HandOff], now: int
    ) -> list[CallOpening | None]:
        """Open the calls of held jobs (within budgets) and offload them, in one transaction."""
        if not hand_offs:
            return []
        group = tuple(hand_offs)
        return await self._database.write(lambda connection: _hand_off(connection, group, now))

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
        batch = (name, provider, lane)
        return await self._database.write(
            lambda connection: _create(connection, batch, leases, now, hold_ms)
        )

    async def batch_submitted(self, batch_id: int, provider_batch_id: str, now: int) -> None:
        """Store the provider's id: the batch is open, due for a poll now."""
        parameters = (provider_batch_id, now, now, batch_id)
        await self._database.write(lambda connection: connection.execute(_SUBMITTED, parameters))

    async def batch_polled(
        self, batch_id: int, status: str, counts: BatchCounts, due_at: int, now: int
    ) -> None:
        """Store what a poll saw and when the batch is next due."""
        tally = (counts.total, counts.succeeded, counts.failed)
        parameters = (status, *tally, due_at, now, batch_id)
        await self._database.write(lambda connection: connection.execute(_POLLED, parameters))

    async def batch_finish(self, ends: Sequence[LineEnd], now: int) -> list[bool]:
        """Settle the ends' calls and apply their outcomes, in one transaction."""
        if not ends:
            return []
        batch = tuple(ends)
        applied = await self._database.write(lambda connection: _finish(connection, batch, now))
        if any(transition and transition.target is JobState.QUEUED for transition in applied):
            self._new_work.announce()
        return [transition is not None for transition in applied]

    async def batch_close(self, batch_id: int, status: str, now: int) -> None:
        """Close the batch; its lines go with it."""
        await self._database.write(lambda connection: _close(connection, batch_id, status, now))

    async def batches_due(self, now: int, hold_ms: int, limit: int) -> list[ProviderBatch]:
        """Take up to `limit` due batches, pushing their `due_at` past the hold."""
        parameters = {"held": now + hold_ms, "now": now, "limit": limit}
        rows = await self._database.write(
            lambda connection: connection.execute(_DUE, parameters).fetchall()
        )
        return sorted((provider_batch_from_row(row) for row in rows), key=lambda b: b.id)

    async def provider_batches(self, limit: int = 100) -> list[ProviderBatch]:
        """The batches not closed, oldest first."""
        rows = await self._database.read(
            lambda connection: connection.execute(_OPEN, (limit,)).fetchall()
        )
        return [provider_batch_from_row(row) for row in rows]

    async def batch_cancels(self, batch_id: int) -> tuple[list[Lease], bool]:
        """The batch's live jobs asked to cancel, and whether other live jobs are left."""
        rows = await self._database.read(
            lambda connection: connection.execute(_CANCELS, (batch_id,)).fetchall()
        )
        asked = [row for row in rows if row["cancel_requested"]]
        leases = [Lease(row["id"], row["lease_token"], row["attempt"]) for row in asked]
        return leases, len(asked) < len(rows)

    async def batch_line_jobs(self, batch_id: int) -> list[LineJob]:
        """Each line of the batch with its job, whatever the job's state."""
        rows = await self._database.read(
            lambda connection: connection.execute(_LINE_JOBS, (batch_id,)).fetchall()
        )
        return [line_job_from_row(row) for row in rows]

    async def stray_jobs(self, handed_before: int, limit: int) -> list[Job]:
        """Running jobs whose waiting line was handed before `handed_before`."""
        return await self._database.write(
            lambda connection: _stray(connection, handed_before, limit)
        )

    async def adopted_batch_ids(self, provider: str, since: int) -> set[str]:
        """The provider ids stored by `provider`'s batches stored since `since`."""
        rows = await self._database.read(
            lambda connection: connection.execute(_ADOPTED, (provider, since)).fetchall()
        )
        return {row["provider_batch_id"] for row in rows}

    async def job_batch(self, job_id: int) -> ProviderBatch | None:
        """The batch holding the running job's line, or None."""
        row = await self._database.read(
            lambda connection: connection.execute(_JOB_BATCH, (job_id,)).fetchone()
        )
        return None if row is None else provider_batch_from_row(row)
