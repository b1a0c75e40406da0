"""Real `backroom worker` processes on one PostgreSQL schema.

- Four burst workers share 20,000 no-op jobs: no job is ever held under two live
  leases at once (read from the attempts table), and every job succeeds.
- Every session of the workers is terminated by the server, twice, mid-run (what
  an operator's `pg_terminate_backend` or a failover does; the server is shared, so
  it is not restarted): the workers keep running, and every job still succeeds.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from deadline_polls import wait_until
from postgres_schemas import scratch_schema

from backroom import App

pytestmark = [pytest.mark.slow, pytest.mark.postgres]
HERE = Path(__file__).parent

WORKERS = 4
JOBS_PER_WORKER = 5_000


@pytest.fixture
def db_url(postgres_url: str) -> Iterator[str]:
    """A PostgreSQL schema of this test's own."""
    with scratch_schema(postgres_url) as url:
        yield url


class Workers:
    """`backroom worker` processes running the test app, each logging to a file."""

    def __init__(self, db_url: str, logs: Path, count: int, *options: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(HERE)}
        command = [sys.executable, "-m", "backroom", "worker", "--app", "crash_app:app"]
        self.logs = [logs / f"worker-{n}.log" for n in range(count)]
        self.processes = []
        for log in self.logs:
            with log.open("wb") as stderr:
                self.processes.append(
                    subprocess.Popen([*command, "--db", db_url, *options], env=env, stderr=stderr)
                )

    def running(self) -> bool:
        return all(process.poll() is None for process in self.processes)

    def wait(self) -> list[int]:
        """Wait for every worker to exit by itself; the exit codes."""
        return [process.wait(timeout=120) for process in self.processes]

    def stop(self) -> list[int]:
        """SIGTERM the workers still running; every exit code."""
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        return [process.wait(timeout=30) for process in self.processes]

    def output(self) -> str:
        return "\n".join(log.read_text() for log in self.logs)


def fetch(db_url: str, query: str, *arguments: Any) -> list[asyncpg.Record]:
    """The rows of one query, on a connection of its own (not one of the workers')."""

    async def run() -> list[asyncpg.Record]:
        connection = await asyncpg.connect(db_url)
        try:
            return await connection.fetch(query, *arguments)
        finally:
            await connection.close()

    return asyncio.run(run())


def submit_many(db_url: str, task: str, payloads: list[Any]) -> None:
    async def run() -> None:
        async with App(db_url) as app:
            for first in range(0, len(payloads), 1_000):
                batch = payloads[first : first + 1_000]
                await app.submit_many([app.new_job(task, payload) for payload in batch])

    asyncio.run(run())


def job_states(db_url: str) -> dict[str, int]:
    rows = fetch(db_url, "SELECT state, count(*) AS jobs FROM jobs GROUP BY state")
    return {row["state"]: row["jobs"] for row in rows}


OVERLAPPING_ATTEMPTS = """
SELECT earlier.job_id FROM attempts AS earlier
JOIN attempts AS later ON later.job_id = earlier.job_id AND later.lease_token > earlier.lease_token
WHERE later.started_at < COALESCE(earlier.finished_at, later.started_at + 1)
  AND earlier.outcome IS DISTINCT FROM 'lease_expired'
"""
"""Jobs with two attempts whose times overlap, though the earlier one's lease did not
expire (an unfinished earlier attempt overlaps every later one)."""


def test_four_workers_never_share_a_job_and_run_every_one(db_url: str, tmp_path: Path) -> None:
    jobs = WORKERS * JOBS_PER_WORKER
    submit_many(db_url, "noop", list(range(jobs)))

    workers = Workers(db_url, tmp_path, WORKERS, "--burst", "--concurrency", "50")
    try:
        codes = workers.wait()
    finally:
        workers.stop()
    assert codes == [0] * WORKERS, workers.output()

    assert job_states(db_url) == {"succeeded": jobs}
    assert fetch(db_url, OVERLAPPING_ATTEMPTS) == []
    (attempts,) = fetch(
        db_url,
        "SELECT count(*) AS total, count(DISTINCT job_id) AS jobs, "
        "count(*) FILTER (WHERE finished_at IS NULL) AS unfinished, "
        "count(DISTINCT worker_id) AS workers FROM attempts",
    )
    assert (attempts["total"], attempts["jobs"], attempts["unfinished"]) == (jobs, jobs, 0)
    assert attempts["workers"] > 1


TERMINATE_WORKER_SESSIONS = """
SELECT count(pg_terminate_backend(pid, 10000)) AS terminated FROM pg_stat_activity
WHERE datname = current_database() AND application_name = 'backroom'
  AND pid <> pg_backend_pid()
"""
"""Terminate every backroom session on the test's database, waiting until each is gone.

The test's own connections are not named `backroom`, and the session's database is
this test run's alone, so nothing else is hit."""


def test_workers_survive_the_server_terminating_all_their_sessions(
    db_url: str, tmp_path: Path
) -> None:
    jobs = 2_000
    submit_many(db_url, "hold", [20] * jobs)
    workers = Workers(db_url, tmp_path, 2, "--concurrency", "10", "--lease", "2")
    terminated = []
    try:
        for share in (3, 3 * 2):

            def enough_succeeded(share: int = share) -> bool:
                return job_states(db_url).get("succeeded", 0) >= jobs * share // 10

            wait_until(enough_succeeded, f"{share}0% of the jobs to succeed")
            (row,) = fetch(db_url, TERMINATE_WORKER_SESSIONS)
            terminated.append(row["terminated"])
        wait_until(lambda: job_states(db_url) == {"succeeded": jobs}, "every job to succeed")

        submit_many(db_url, "noop", [None])
        wait_until(lambda: job_states(db_url) == {"succeeded": jobs + 1}, "a job after that")
        assert workers.running()
    finally:
        codes = workers.stop()

    # Sessions of both workers were there to terminate each time.
    assert all(count >= 2 for count in terminated), terminated
    assert codes == [0, 0], workers.output()
