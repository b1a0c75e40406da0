"""The worker processes: each one's registry row, whether it is alive, and what it runs.

A worker registers when it starts and beats every heartbeat interval (see
`backroom.runtime.presence`), so an idle worker shows as well as a busy one; what it
runs are the jobs whose lease it holds (their `worker_id`). A worker that holds jobs
but never registered (one of a version before the registry) is shown from its leases.
Listing every worker is an admin's: workers serve every tenant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backroom.core.job import Job
from backroom.core.workers import WorkerRecord, WorkerState
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.documents import iso
from backroom.service.replies import Reply, problem

MAX_RUNNING_SHOWN = 500
"""The most running jobs read to tell what the workers run."""


@dataclass(frozen=True, slots=True)
class WorkerView:
    """One worker: its registry row (None: seen only through the leases of its jobs),
    its state as of now (None then too), and the running jobs it holds."""

    worker_id: str
    record: WorkerRecord | None
    state: WorkerState | None
    jobs: tuple[Job, ...]

    @property
    def lease_expires_at(self) -> int | None:
        """When the latest lease it holds ends (None: it holds none)."""
        return max((job.lease_expires_at or 0 for job in self.jobs), default=None)


def worker_views(
    records: list[WorkerRecord], running: list[Job], now: int, *, stopped: bool
) -> tuple[WorkerView, ...]:
    """Every registered worker (the stopped ones only if `stopped`) and every worker
    holding one of `running`, by id, each with the jobs it holds."""
    held: dict[str, list[Job]] = {}
    for job in running:
        held.setdefault(job.worker_id or "unknown", []).append(job)
    views = {
        record.info.worker_id: WorkerView(
            record.info.worker_id,
            record,
            record.state(now),
            tuple(held.get(record.info.worker_id, ())),
        )
        for record in records
        if stopped or record.state(now) is not WorkerState.STOPPED
    }
    for worker_id, jobs in held.items():
        if worker_id not in views:
            views[worker_id] = WorkerView(worker_id, None, None, tuple(jobs))
    return tuple(views[worker_id] for worker_id in sorted(views))


async def workers(app: AppParts, tenant: str | None, *, stopped: bool) -> tuple[WorkerView, ...]:
    """The workers as of now, each with the running jobs of `tenant` (None: any) it holds."""
    now = app.clock.now()
    records = await app.store.workers()
    running = await app.store.running_jobs(tenant, MAX_RUNNING_SHOWN)
    return worker_views(records, running, now, stopped=stopped)


def worker_document(view: WorkerView) -> dict[str, Any]:
    """One worker as plain data."""
    record = view.record
    info = None if record is None else record.info
    return {
        "id": view.worker_id,
        "state": "unregistered" if view.state is None else str(view.state),
        "hostname": None if info is None else info.hostname,
        "pid": None if info is None else info.pid,
        "queues": None if info is None else list(info.queues),
        "concurrency": None if info is None else info.concurrency,
        "heartbeat_interval_seconds": None if info is None else info.heartbeat_ms / 1000,
        "started_at": None if info is None else iso(info.started_at),
        "heartbeat_at": None if record is None else iso(record.heartbeat_at),
        "stopped_at": None if record is None else iso(record.stopped_at),
        "running": [
            {"id": job.id, "task": job.task, "queue": job.queue, "tenant": job.tenant}
            for job in view.jobs
        ],
    }


async def list_workers(app: AppParts, caller: Caller) -> Reply:
    """Every registered worker, alive, lost or stopped, with the jobs it runs (admin)."""
    if not caller.admin:
        return problem(403, "only an admin may list the workers, which serve every tenant")
    views = await workers(app, None, stopped=True)
    return Reply(200, {"workers": [worker_document(view) for view in views]})
