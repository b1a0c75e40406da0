"""Real `backroom serve` and `backroom worker` processes behind a real PgBouncer.

- An API server and two workers, all through the pooler (session and transaction
  pooling): every job submitted over HTTP succeeds, and its effect runs exactly once;
  the three processes keep within their connection budget (with the old pool of 10
  plus LISTEN, two workers took 22 of PgBouncer's 20 server connections and the API
  server starved).
- Pickups come from the LISTEN wake-up: through a session pooler, or through a direct
  listen URL beside a transaction pooler. The workers poll only every 600 s, so a job
  picked up within the test's deadline can only have been woken for.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from pgbouncer_process import PgBouncer, free_port, store_url

from backroom import App
from backroom.store.postgres.database import DEFAULT_POOL_MAX

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
HERE = Path(__file__).parent
DEADLINE_S = 60.0
JOBS = 120
POLL_ONLY_WARNING = "not listening for new work"


class Processes:
    """`backroom` commands running the test app, each logging to a file of its own."""

    def __init__(self, logs: Path) -> None:
        self._logs = logs
        self._running: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(self, name: str, *arguments: str, env: dict[str, str] | None = None) -> Path:
        """Start `backroom ARGUMENTS...` (with `env` added); the file its output goes to."""
        env = {**os.environ, "PYTHONPATH": str(HERE), **(env or {})}
        log = self._logs / f"{name}.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [sys.executable, "-m", "backroom", *arguments],
                env=env,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        self._running.append((process, log))
        return log

    def stop(self) -> list[int]:
        """SIGTERM every process; their exit codes."""
        for process, _ in self._running:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        return [process.wait(timeout=30) for process, _ in self._running]

    def output(self) -> str:
        return "\n".join(f"== {log.name}\n{log.read_text()}" for _, log in self._running)


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    running = Processes(tmp_path)
    yield running
    running.stop()


def wait_until(predicate: Callable[[], Any], what: str, output: Callable[[], str]) -> Any:
    """Poll `predicate` until it returns something true, within the deadline."""
    deadline = time.monotonic() + DEADLINE_S
    while not (found := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{output()}")
        time.sleep(0.05)
    return found


def fetch(url: str, query: str) -> list[asyncpg.Record]:
    """The rows of one query, on a direct connection of its own."""

    async def run() -> list[asyncpg.Record]:
        connection = await asyncpg.connect(url)
        try:
            return await connection.fetch(query)
        finally:
            await connection.close()

    return asyncio.run(run())


def api_key(log: Path) -> str | None:
    """The key `serve` printed for the default tenant, once it has."""
    for line in log.read_text().splitlines():
        if "export BACKROOM_API_KEY=" in line:
            return line.split("=", 1)[1].strip()
    return None


def submit_over_http(port: int, key: str, effects: Path) -> list[int]:
    """Submit the jobs through the API; their ids."""
    headers = {"Authorization": f"Bearer {key}"}
    # Long enough that one worker's 20 slots cannot drain the queue between two polls
    # of the other: both must take a share.
    payload = {"log": str(effects), "hold_ms": 200}
    body = {"task": "effect-then-hold", "input": payload}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers) as client:
        answers = [client.post("/v1/jobs", json=body, timeout=30) for _ in range(JOBS)]
    assert {answer.status_code for answer in answers} == {202}, answers[-1].text
    return [answer.json()["id"] for answer in answers]


def start_server_and_workers(
    processes: Processes, bouncer: PgBouncer, database: str
) -> tuple[int, str, list[Path]]:
    """An API server (no worker) and two workers through `bouncer`: the server's port,
    its API key, and the workers' logs. The server is told of the pooler by its URL,
    the workers by the environment."""
    port = free_port()
    app = ["--app", "crash_app:app"]
    server = ["--db", store_url(bouncer, database), "--no-worker", "--port", str(port)]
    server_log = processes.start("serve", "serve", *app, *server)
    key = wait_until(lambda: api_key(server_log), "the API key", processes.output)
    worker = [*app, "--db", bouncer.url(database), "--concurrency", "20", "--poll-interval", "0.2"]
    pooler = {"BACKROOM_PG_POOLER": bouncer.mode}
    logs = [processes.start(f"worker-{n}", "worker", *worker, env=pooler) for n in range(2)]
    return port, key, logs


def open_sessions(direct_url: str) -> int:
    """How many server sessions are open on the test's database, but the one asking."""
    (sessions,) = fetch(
        direct_url,
        "SELECT count(*) AS open FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    return int(sessions["open"])


def test_an_api_server_and_two_workers_run_every_job_once_through_pgbouncer(
    pgbouncer: PgBouncer, database: str, direct_url: str, processes: Processes, tmp_path: Path
) -> None:
    port, key, worker_logs = start_server_and_workers(processes, pgbouncer, database)
    effects = tmp_path / "effects.txt"

    def both_workers_registered() -> bool:
        (workers,) = fetch(direct_url, "SELECT count(*) AS alive FROM workers")
        return bool(workers["alive"] == 2)

    # A worker still starting when the jobs arrive leaves them all to the other.
    wait_until(both_workers_registered, "both workers to start", processes.output)

    ids = submit_over_http(port, key, effects)

    def all_succeeded() -> bool:
        rows = fetch(direct_url, "SELECT state, count(*) AS jobs FROM jobs GROUP BY state")
        return {row["state"]: row["jobs"] for row in rows} == {"succeeded": JOBS}

    wait_until(all_succeeded, "every job to succeed", processes.output)
    # The budget per process (docs/operations.md): at most pool_max + 4 server sessions
    # (the pool, the claims', the LISTEN for new work, the feed's, the new-work hint's),
    # every one it opened still open (idle ones close after 5 minutes).
    assert 0 < open_sessions(direct_url) <= 3 * (DEFAULT_POOL_MAX + 4)
    assert processes.stop() == [0, 0, 0], processes.output()
    (attempts,) = fetch(
        direct_url,
        "SELECT count(*) AS total, count(DISTINCT job_id) AS jobs,"
        " count(DISTINCT worker_id) AS workers FROM attempts",
    )
    assert (attempts["total"], attempts["jobs"], attempts["workers"]) == (JOBS, JOBS, 2)
    ran = sorted(int(line.split()[0]) for line in effects.read_text().splitlines())
    assert ran == sorted(ids)
    # Through a transaction pooler nothing can LISTEN: the workers say they poll.
    polling = [POLL_ONLY_WARNING in log.read_text() for log in worker_logs]
    assert polling == [pgbouncer.mode == "transaction"] * 2


@pytest.mark.parametrize("pgbouncer", ["session", "transaction"], indirect=True)
def test_an_idle_worker_is_woken_for_new_work_not_found_by_polling(
    pgbouncer: PgBouncer, database: str, direct_url: str, processes: Processes
) -> None:
    url = store_url(pgbouncer, database)
    # Session pooling: LISTEN goes through the pooler. Transaction pooling: it goes
    # straight to PostgreSQL through the listen URL, while everything else is pooled.
    listen = ["--listen-url", direct_url] if pgbouncer.mode == "transaction" else []
    processes.start(
        "worker", "worker", "--app", "crash_app:app", "--db", url, *listen, "--poll-interval", "600"
    )

    async def submit() -> int:
        async with App(url) as app:
            return (await app.submit("noop", None)).job.id

    for _ in range(3):
        job_id = asyncio.run(submit())

        def succeeded(job_id: int = job_id) -> bool:
            rows = fetch(direct_url, f"SELECT state FROM jobs WHERE id = {job_id}")
            return bool(rows[0]["state"] == "succeeded")

        # The first job may be taken by the worker's first claim; the others, submitted
        # once it idles until its next poll in 600 s, only by a wake-up.
        wait_until(succeeded, f"job {job_id} to be picked up", processes.output)
    assert POLL_ONLY_WARNING not in processes.output()
