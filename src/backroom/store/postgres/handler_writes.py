"""What a running handler writes through its lease on PostgreSQL: progress and `once`.

Every statement here is fenced: it changes something only while the job is running
under the lease token the handler was given, and reports whether it was.
"""

from __future__ import annotations

from backroom.core.job import JSON, Lease
from backroom.store.postgres.part import PostgresPart, lease_lost
from backroom.store.records import OnceRecord
from backroom.store.rows import dump_json, dump_nullable_json, load_json

_SET_PROGRESS = """
WITH changed AS (
    UPDATE jobs
    SET progress = COALESCE($3, progress), partial = COALESCE($4, partial), updated_at = $5
    WHERE id = $1 AND lease_token = $2 AND state = 'running'
    RETURNING id
), told AS (
    -- A progress event in the feed, for streams and webhooks (not a transition).
    INSERT INTO job_events (job_id, at, from_state, to_state, reason)
    SELECT id, $5, 'running', 'running', 'progress' FROM changed
)
SELECT id FROM changed
"""
"""$1 job id, $2 token, $3 fraction, $4 partial JSON, $5 now; NULL leaves a value be."""

_HELD = """
WITH held AS (
    SELECT id FROM jobs WHERE id = $1 AND lease_token = $2 AND state = 'running' FOR SHARE
)"""

_ONCE_BEGIN = (
    _HELD
    + """, begun AS (
    INSERT INTO once_records (job_id, name, done, created_at)
    SELECT id, $3, FALSE, $4 FROM held
    ON CONFLICT (job_id, name) DO NOTHING
    RETURNING job_id
)
SELECT EXISTS (SELECT FROM held) AS held, EXISTS (SELECT FROM begun) AS begun,
       record.done, record.result
FROM (SELECT) AS one
LEFT JOIN once_records AS record ON record.job_id = $1 AND record.name = $3
"""
)
"""$1 job id, $2 token, $3 name, $4 now: whether the lease is held, whether this call
began the entry, and the entry an earlier attempt stored."""

_ONCE_END = (
    _HELD
    + """, ended AS (
    INSERT INTO once_records (job_id, name, done, result, created_at)
    SELECT id, $3, TRUE, $4, $5 FROM held
    ON CONFLICT (job_id, name) DO UPDATE SET done = TRUE, result = excluded.result
)
SELECT EXISTS (SELECT FROM held)
"""
)
"""$1 job id, $2 token, $3 name, $4 result JSON, $5 now: whether the lease is held."""

_ONCE_ABORT = (
    _HELD
    + """, forgotten AS (
    DELETE FROM once_records AS record
    WHERE record.job_id IN (SELECT id FROM held) AND record.name = $3 AND NOT record.done
)
SELECT EXISTS (SELECT FROM held)
"""
)
"""$1 job id, $2 token, $3 name: whether the lease is held."""


class PostgresHandlerWrites(PostgresPart):
    """What a running handler writes through its lease (see `HandlerWriteStore`)."""

    async def set_progress(
        self, lease: Lease, fraction: float | None, partial: JSON, now: int
    ) -> bool:
        """Store coarse progress and partial output; None leaves a value as it was."""
        async with self._database.connection() as connection:
            updated = await connection.fetchval(
                _SET_PROGRESS,
                lease.job_id,
                lease.token,
                fraction,
                dump_nullable_json(partial),
                now,
            )
        return updated is not None

    async def once_begin(self, lease: Lease, name: str, now: int) -> OnceRecord | None:
        """Claim the `once` entry `name`: None if this caller must run the effect."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(_ONCE_BEGIN, lease.job_id, lease.token, name, now)
        if row is None or not row["held"]:
            raise lease_lost(lease)
        if row["begun"]:
            return None
        return OnceRecord(done=row["done"], result=load_json(row["result"]))

    async def once_end(self, lease: Lease, name: str, result: JSON, now: int) -> None:
        """Record the result of the `once` effect this lease began."""
        async with self._database.connection() as connection:
            held = await connection.fetchval(
                _ONCE_END, lease.job_id, lease.token, name, dump_json(result), now
            )
        if not held:
            raise lease_lost(lease)

    async def once_abort(self, lease: Lease, name: str) -> None:
        """Forget the `once` entry this lease began: its effect raised, so it may run again."""
        async with self._database.connection() as connection:
            held = await connection.fetchval(_ONCE_ABORT, lease.job_id, lease.token, name)
        if not held:
            raise lease_lost(lease)
