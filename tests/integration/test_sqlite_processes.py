"""Several processes (and connections) claiming and finishing jobs from one SQLite file.

The test starts copies of this file as worker processes (see `main` at the bottom).
Each submits the same idempotency key, then claims and finishes jobs until none is
left, retrying some jobs once, and reports every lease it was given. No job may ever
be held under two leases at once, no SQLITE_BUSY may escape, and every job must end.

On a loaded machine a process can find the file locked past every busy retry (the
holder is not scheduled): the store then raises `StoreUnavailable`, having written
nothing, and the process calls again, as `backroom worker` does.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

import pytest

from backroom.core.errors import StoreUnavailable
from backroom.core.job import ErrorInfo, Job, JobState, NewJob
from backroom.core.outcome import Outcome, RetryAt, Succeeded
from backroom.store.protocol import JobFilter
from backroom.store.sqlite.store import SqliteStore

PROCESSES = 4
JOBS = 1_200
BATCH = 10
T0 = 1_700_000_000_000
# No lease expires during the run, so any lost lease would be a double claim.
LEASE_MS = 3_600_000
SHARED_KEY = NewJob("shared", {"n": 0}, T0, idempotency_key="shared", fingerprint="f")
T = TypeVar("T")


def outcome_for(job: Job, worker_id: str) -> Outcome:
    """Every third job fails its first attempt, to send it round again."""
    if job.id % 3 == 0 and job.attempt == 1:
        return RetryAt(T0, ErrorInfo("TimeoutError", "try again"))
    return Succeeded(worker_id)


async def until_available(call: Callable[[], Awaitable[T]]) -> T:
    """`call()`, called again while the store says it stayed locked (nothing written)."""
    while True:
        try:
            return await call()
        except StoreUnavailable:
            continue


async def work(path: str, worker_id: str) -> dict[str, object]:
    """Submit the shared key, then claim and finish until nothing is left to claim."""
    store = SqliteStore(path)
    leases: list[tuple[int, int]] = []
    refused = 0
    try:
        for _ in range(10):
            await until_available(partial(store.submit, SHARED_KEY, T0))
        claim = partial(store.claim, [], BATCH, worker_id, LEASE_MS, T0)
        while jobs := await until_available(claim):
            leases.extend((job.id, job.lease_token) for job in jobs)
            finished = [(job.lease, outcome_for(job, worker_id)) for job in jobs]
            applied = await until_available(partial(store.finish, finished, T0))
            refused += applied.count(False)
    finally:
        await store.close()
    return {"leases": leases, "refused": refused}


async def seed(path: str) -> None:
    """Create the database and queue the jobs."""
    store = SqliteStore(path)
    try:
        await store.migrate()
        await store.submit_many([NewJob("noop", {"n": n}, T0) for n in range(JOBS)], T0)
    finally:
        await store.close()


async def stored_jobs(path: str) -> list[Job]:
    """Every job in the database."""
    store = SqliteStore(path)
    try:
        return await store.list_jobs(JobFilter(limit=JOBS * 2))
    finally:
        await store.close()


@dataclass(frozen=True)
class Report:
    """What one worker process did: the (job id, lease token) of each claim, and refusals."""

    leases: list[tuple[int, int]]
    refused: int


def run_workers(path: str) -> list[Report]:
    """Start the worker processes, let them go at once, and collect their reports."""
    command = [sys.executable, __file__, path]
    processes = [
        subprocess.Popen(
            [*command, f"worker-{n}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    reports: list[Report] = []
    try:
        for process in processes:
            assert process.stdout is not None
            assert process.stdout.readline() == "ready\n"
        for process in processes:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        outputs = [process.communicate(timeout=90) for process in processes]
    finally:
        for process in processes:
            process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
    for process, (stdout, stderr) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, stderr
        report = json.loads(stdout)
        reports.append(Report([tuple(lease) for lease in report["leases"]], report["refused"]))
    return reports


@pytest.mark.slow
def test_processes_on_one_file_never_share_a_job(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    asyncio.run(seed(path))

    reports = run_workers(path)

    leases = [lease for report in reports for lease in report.leases]
    assert [report.refused for report in reports] == [0] * PROCESSES
    assert len(leases) == len(set(leases))
    jobs = asyncio.run(stored_jobs(path))
    assert len(jobs) == JOBS + 1
    assert {job.state for job in jobs} == {JobState.SUCCEEDED}
    claims = Counter(job_id for job_id, _ in leases)
    assert all(claims[job.id] == (2 if job.id % 3 == 0 else 1) for job in jobs)


async def test_a_lock_held_past_every_retry_is_reported_as_unavailable(tmp_path: Path) -> None:
    path = str(tmp_path / "locked.db")
    await seed(path)
    store = SqliteStore(path, busy_timeout_ms=1)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreUnavailable):
            await store.claim([], 1, "worker-1", LEASE_MS, T0)
        holder.execute("ROLLBACK")
        assert len(await store.claim([], 1, "worker-1", LEASE_MS, T0)) == 1
    finally:
        holder.close()
        await store.close()


def main() -> None:
    """A worker process: say ready, wait for go, work, print the report as JSON."""
    path, worker_id = sys.argv[1:3]
    print("ready", flush=True)
    sys.stdin.readline()
    print(json.dumps(asyncio.run(work(path, worker_id))))


if __name__ == "__main__":
    main()
