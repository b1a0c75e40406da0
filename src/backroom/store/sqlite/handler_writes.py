"""What a running handler writes through its lease on SQLite: progress, `once` records.

Every write here is fenced: it applies only while the job is running under the
lease token the handler was given.
"""

from __future__ import annotations

import sqlite3

from backroom.core.errors import LeaseLost
from backroom.core.job import JSON, Lease
from backroom.store.records import OnceRecord
from backroom.store.rows import dump_json, dump_nullable_json, load_json
from backroom.store.sqlite.id_floors import next_id_sql
from backroom.store.sqlite.part import SqlitePart

_HOLDS_LEASE = "SELECT 1 FROM jobs WHERE id = ? AND lease_token = ? AND state = 'running'"

# None (SQL NULL) leaves the stored progress or partial output as it was.
_SET_PROGRESS = """
UPDATE jobs
SET progress = COALESCE(?, progress), partial = COALESCE(?, partial), updated_at = ?
WHERE id = ? AND lease_token = ? AND state = 'running'
"""

_PROGRESS_EVENT = (
    "INSERT INTO job_events (id, job_id, at, from_state, to_state, reason) "
    f"VALUES ({next_id_sql('job_events')}, ?, ?, 'running', 'running', 'progress')"
)

_END_ONCE = """
INSERT INTO once_records (job_id, name, done, result, created_at) VALUES (?, ?, 1, ?, ?)
ON CONFLICT (job_id, name) DO UPDATE SET done = 1, result = excluded.result
"""


def _set_progress(
    connection: sqlite3.Connection, lease: Lease, fraction: float | None, partial: JSON, now: int
) -> bool:
    """Store progress and partial output on the job; False if the lease is no longer held."""
    cursor = connection.execute(
        _SET_PROGRESS, (fraction, dump_nullable_json(partial), now, lease.job_id, lease.token)
    )
    if cursor.rowcount != 1:
        return False
    # A progress event in the feed, for streams and webhooks (not a transition).
    connection.execute(_PROGRESS_EVENT, (lease.job_id, now))
    return True


def _require_lease(connection: sqlite3.Connection, lease: Lease) -> None:
    if connection.execute(_HOLDS_LEASE, (lease.job_id, lease.token)).fetchone() is None:
        raise LeaseLost(f"job {lease.job_id} is no longer held under lease {lease.token}")


def _once_begin(
    connection: sqlite3.Connection, lease: Lease, name: str, now: int
) -> OnceRecord | None:
    """Claim the job's `once` entry `name`: None if this call did, else the stored record."""
    _require_lease(connection, lease)
    cursor = connection.execute(
        "INSERT INTO once_records (job_id, name, done, created_at) VALUES (?, ?, 0, ?) "
        "ON CONFLICT (job_id, name) DO NOTHING",
        (lease.job_id, name, now),
    )
    if cursor.rowcount == 1:
        return None
    done, result = connection.execute(
        "SELECT done, result FROM once_records WHERE job_id = ? AND name = ?",
        (lease.job_id, name),
    ).fetchone()
    return OnceRecord(done=bool(done), result=load_json(result))


def _once_end(
    connection: sqlite3.Connection, lease: Lease, name: str, result: JSON, now: int
) -> None:
    """Record the result of the job's `once` effect `name`."""
    _require_lease(connection, lease)
    connection.execute(_END_ONCE, (lease.job_id, name, dump_json(result), now))


def _once_abort(connection: sqlite3.Connection, lease: Lease, name: str) -> None:
    """Forget the job's unfinished `once` entry `name`, so a later call may run it again."""
    _require_lease(connection, lease)
    connection.execute(
        "DELETE FROM once_records WHERE job_id = ? AND name = ? AND done = 0",
        (lease.job_id, name),
    )


class SqliteHandlerWrites(SqlitePart):
    """What a running handler writes through its lease (see `HandlerWriteStore`)."""

    async def set_progress(
        self, lease: Lease, fraction: float | None, partial: JSON, now: int
    ) -> bool:
        """Store coarse progress and partial output; None leaves a value as it was."""
        return await self._database.write(
            lambda connection: _set_progress(connection, lease, fraction, partial, now)
        )

    async def once_begin(self, lease: Lease, name: str, now: int) -> OnceRecord | None:
        """Claim the `once` entry `name`: None if this caller must run the effect."""
        return await self._database.write(
            lambda connection: _once_begin(connection, lease, name, now)
        )

    async def once_end(self, lease: Lease, name: str, result: JSON, now: int) -> None:
        """Record the result of the `once` effect this lease began."""
        await self._database.write(
            lambda connection: _once_end(connection, lease, name, result, now)
        )

    async def once_abort(self, lease: Lease, name: str) -> None:
        """Forget the `once` entry this lease began: its effect raised, so it may run again."""
        await self._database.write(lambda connection: _once_abort(connection, lease, name))
