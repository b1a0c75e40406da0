"""How the worker registry's values become rows of `workers` and back (every SQL backend)."""

from __future__ import annotations

from typing import Any

from backroom.core.workers import WorkerInfo, WorkerRecord
from backroom.store.rows import Row, dump_json, load_json

WORKER_COLUMNS = (
    "id, hostname, pid, queues, concurrency, heartbeat_ms, started_at, heartbeat_at, stopped_at"
)
"""The columns of `workers`, in the order `worker_values` gives them."""

WORKER_BEAT = f"""
INSERT INTO workers ({WORKER_COLUMNS}) VALUES ({{values}})
ON CONFLICT (id) DO UPDATE SET
    hostname = excluded.hostname, pid = excluded.pid, queues = excluded.queues,
    concurrency = excluded.concurrency, heartbeat_ms = excluded.heartbeat_ms,
    started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, stopped_at = NULL
"""
"""The upsert of a worker's heartbeat (its row, fresh or refreshed and stopped no more),
for `str.format(values=...)` with the backend's nine placeholders."""


def worker_values(worker: WorkerInfo, now: int) -> tuple[Any, ...]:
    """The row of `worker` beating at `now`, in `WORKER_COLUMNS` order (not stopped)."""
    return (
        worker.worker_id,
        worker.hostname,
        worker.pid,
        dump_json(list(worker.queues)),
        worker.concurrency,
        worker.heartbeat_ms,
        worker.started_at,
        now,
        None,
    )


def worker_from_row(row: Row) -> WorkerRecord:
    """The registered worker a `workers` row holds."""
    queues = load_json(row["queues"])
    assert isinstance(queues, list)
    info = WorkerInfo(
        worker_id=row["id"],
        hostname=row["hostname"],
        pid=int(row["pid"]),
        queues=tuple(str(queue) for queue in queues),
        concurrency=int(row["concurrency"]),
        heartbeat_ms=int(row["heartbeat_ms"]),
        started_at=int(row["started_at"]),
    )
    stopped_at = row["stopped_at"]
    return WorkerRecord(
        info, int(row["heartbeat_at"]), None if stopped_at is None else int(stopped_at)
    )
