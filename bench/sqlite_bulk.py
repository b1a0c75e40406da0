"""A fast bulk fill of a backroom SQLite database with a month of jobs, for benchmarks."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

DAY_MS = 86_400_000

# One statement over a recursive counter: 90% succeeded, 5% failed (3 error classes),
# 2% cancelled, 2% queued, 1% running; 3 queues, 19 tenants, 7 tasks, 30 days (counts
# prime to 100, so that every tenant and task has jobs in every state).
FILL = """
WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < :jobs),
numbered AS (
    SELECT i, :now - 30 * 86400000 + i * (30 * 86400000 / :jobs) AS created,
           CASE WHEN i % 100 < 90 THEN 'succeeded' WHEN i % 100 < 95 THEN 'failed'
                WHEN i % 100 < 97 THEN 'cancelled' WHEN i % 100 < 99 THEN 'queued'
                ELSE 'running' END AS state
    FROM n
)
INSERT INTO jobs (tenant, task, queue, state, input, max_attempts, attempt, run_at,
                  created_at, updated_at, started_at, finished_at, error_kind,
                  error_message, worker_id, lease_expires_at, metadata)
SELECT 'tenant-' || (i % 19), 'task-' || (i % 7),
       CASE i % 3 WHEN 0 THEN 'interactive' WHEN 1 THEN 'batch' ELSE 'reports' END,
       state, '{"n": ' || i || '}', 3, CASE WHEN state = 'queued' THEN 0 ELSE 1 END,
       created, created, created, created + 100,
       CASE WHEN state IN ('succeeded', 'failed', 'cancelled') THEN created + 2000 END,
       CASE WHEN state = 'failed' THEN
           CASE i % 3 WHEN 0 THEN 'TimeoutError' WHEN 1 THEN 'RateLimited' ELSE 'ValueError' END
       END,
       CASE WHEN state = 'failed' THEN 'failure number ' || i END,
       CASE WHEN state = 'running' THEN 'worker-' || (i % 8) END,
       CASE WHEN state = 'running' THEN :now + 30000 END,
       '{}'
FROM numbered
"""


def fill_sqlite(path: Path, jobs: int, now: int) -> float:
    """Insert `jobs` jobs into the migrated database at `path`; the seconds it took."""
    connection = sqlite3.connect(path)
    try:
        started = time.perf_counter()
        with connection:
            connection.execute(FILL, {"jobs": jobs, "now": now})
        connection.execute("ANALYZE")
        return time.perf_counter() - started
    finally:
        connection.close()
