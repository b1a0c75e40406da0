"""What a running handler stores through its lease: progress, and `once` records.

Every write here is fenced: it applies only while the job is running under the
lease token the handler was given.
"""

from __future__ import annotations

import sqlite3

from backroom.core.errors import LeaseLost
from backroom.core.job import JSON, Lease
from backroom.store.records import OnceRecord
from backroom.store.rows import dump_json, dump_nullable_json, load_json

_HOLDS_LEASE = "SELECT 1 FROM jobs WHERE id = ? AND lease_token = ? AND state = 'running'"

# None (SQL NULL) leaves the stored progress or partial output as it was.
_SET_PROGRESS = """
UPDATE jobs
SET progress = COALESCE(?, progress), partial = COALESCE(?, partial), updated_at = ?
WHERE id = ? AND lease_token = ? AND state = 'running'
"""

_END_ONCE = """
INSERT INTO once_records (job_id, name, done, result, created_at) VALUES (?, ?, 1, ?, ?)
ON CONFLICT (job_id, name) DO UPDATE SET done = 1, result = excluded.result
"""


def set_progress(
    connection: sqlite3.Connection, lease: Lease, fraction: float | None, partial: JSON, now: int
) -> bool:
    """Store progress and partial output on the job; False if the lease is no longer held."""
    cursor = connection.execute(
        _SET_PROGRESS, (fraction, dump_nullable_json(partial), now, lease.job_id, lease.token)
    )
    return cursor.rowcount == 1


def _require_lease(connection: sqlite3.Connection, lease: Lease) -> None:
    if connection.execute(_HOLDS_LEASE, (lease.job_id, lease.token)).fetchone() is None:
        raise LeaseLost(f"job {lease.job_id} is no longer held under lease {lease.token}")


def once_begin(
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


def once_end(
    connection: sqlite3.Connection, lease: Lease, name: str, result: JSON, now: int
) -> None:
    """Record the result of the job's `once` effect `name`."""
    _require_lease(connection, lease)
    connection.execute(_END_ONCE, (lease.job_id, name, dump_json(result), now))


def once_abort(connection: sqlite3.Connection, lease: Lease, name: str) -> None:
    """Forget the job's unfinished `once` entry `name`, so a later call may run it again."""
    _require_lease(connection, lease)
    connection.execute(
        "DELETE FROM once_records WHERE job_id = ? AND name = ? AND done = 0",
        (lease.job_id, name),
    )
