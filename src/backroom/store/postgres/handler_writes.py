"""The SQL behind what a running handler writes through its lease: progress and `once`.

Every statement here is fenced: it changes something only while the job is running
under the lease token the handler was given, and reports whether it was.
"""

from __future__ import annotations

SET_PROGRESS = """
UPDATE jobs
SET progress = COALESCE($3, progress), partial = COALESCE($4, partial), updated_at = $5
WHERE id = $1 AND lease_token = $2 AND state = 'running'
RETURNING id
"""
"""$1 job id, $2 token, $3 fraction, $4 partial JSON, $5 now; NULL leaves a value be."""

_HELD = """
WITH held AS (
    SELECT id FROM jobs WHERE id = $1 AND lease_token = $2 AND state = 'running' FOR SHARE
)"""

ONCE_BEGIN = (
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

ONCE_END = (
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

ONCE_ABORT = (
    _HELD
    + """, forgotten AS (
    DELETE FROM once_records AS record
    WHERE record.job_id IN (SELECT id FROM held) AND record.name = $3 AND NOT record.done
)
SELECT EXISTS (SELECT FROM held)
"""
)
"""$1 job id, $2 token, $3 name: whether the lease is held."""
