"""backroom's rows of the LLM benchmark: the workload as `llm.respond` jobs run by
`backroom worker` processes that share their lane through one SQLite store.

The lane is configured like the mock (same requests and tokens per minute), in a
TOML file handed to the workers as `BACKROOM_CONFIG`. Everything measured is read
back from the store afterwards: the attempts' times, their outcomes and errors.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from backroom import App
from backroom.core.job import JSON
from backroom.llm.config import load_llm_config
from backroom.llm.model_limits import LaneCharging
from backroom.llm.task import RESPOND_TASK, register_llm_tasks
from backroom.store.sqlite.store import SqliteStore
from bench.llm_loops import RunStats

ROOT = Path(__file__).resolve().parent.parent
WORKER_APP = "bench.llm_app:app"
WORKER_TIMEOUT_S = 900
LEASE_S = 300
MEMORY_POLL_S = 0.2
TCP_ESTABLISHED = "01"
"""A connection's state in /proc/net/tcp."""


@dataclass(frozen=True, slots=True)
class Lane:
    """The lane's model and limits, as the workers' config file states them."""

    model: str
    max_concurrency: int | None
    requests_per_minute: int | None
    tokens_per_minute: int | None
    charge_at: LaneCharging = LaneCharging.ADMISSION

    def toml(self, base_url: str) -> str:
        """A config file with one provider, `mock`, whose one model is this lane."""
        lines = [
            "[providers.mock]",
            f'base_url = "{base_url}"',
            "",
            f'[providers.mock.models."{self.model}"]',
        ]
        limits = {
            "max_concurrency": self.max_concurrency,
            "requests_per_minute": self.requests_per_minute,
            "tokens_per_minute": self.tokens_per_minute,
        }
        lines += [f"{name} = {value}" for name, value in limits.items() if value is not None]
        lines.append(f'charge_at = "{self.charge_at}"')
        return "\n".join(lines) + "\n"


async def _submit(database: str, config_path: Path, payloads: list[JSON]) -> None:
    """Submit the payloads as `llm.respond` jobs, each in its lane (as the API would)."""
    app = App(store=SqliteStore.from_url(database))
    register_llm_tasks(app, load_llm_config(config_path, {}))
    async with app:
        jobs = [app.new_job(RESPOND_TASK, payload, max_attempts=10) for payload in payloads]
        for first in range(0, len(jobs), 1000):
            await app.submit_many(jobs[first : first + 1000])


@contextmanager
def _workspace(base_url: str, lane: Lane, payloads: list[JSON]) -> Iterator[tuple[str, Path]]:
    """A fresh database holding the jobs, and the workers' config file: (URL, config)."""
    with tempfile.TemporaryDirectory() as folder:
        config_path = Path(folder) / "llm.toml"
        config_path.write_text(lane.toml(base_url))
        database = f"sqlite:///{Path(folder) / 'bench.db'}"
        asyncio.run(_submit(database, config_path, payloads))
        yield database, config_path


def _start_worker(database: str, config_path: Path, concurrency: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "backroom", "worker", "--app", WORKER_APP]
    options = ["--db", database, "--burst", "--concurrency", str(concurrency)]
    options += ["--lease", str(LEASE_S)]
    environment = {**os.environ, "BACKROOM_CONFIG": str(config_path)}
    return subprocess.Popen(command + options, cwd=ROOT, env=environment)


def _stats(name: str, database: str) -> RunStats:
    """What the run did, read from the stored attempts.

    A call is an attempt that reached the provider: every attempt but those deferred
    before their call (a busy lane, a spent budget), which carry no error. A 429 is
    an attempt whose error is a `RateLimited`; it is deferred too, so it uses none of
    the job's attempts, which the name reports with the deferrals.
    """
    path = database.removeprefix("sqlite:///")
    with sqlite3.connect(path) as connection:
        first, last = connection.execute(
            "SELECT MIN(started_at), MAX(finished_at) FROM attempts WHERE outcome = 'succeeded'"
        ).fetchone()
        calls, limited, deferred = connection.execute(
            "SELECT COUNT(*) FILTER (WHERE outcome <> 'deferred' OR error_kind IS NOT NULL), "
            "COUNT(*) FILTER (WHERE error_kind = 'RateLimited'), "
            "COUNT(*) FILTER (WHERE outcome = 'deferred' AND error_kind IS NULL) FROM attempts"
        ).fetchone()
        attempts = [
            row[0]
            for row in connection.execute(
                "SELECT COUNT(*) FILTER (WHERE attempt.outcome <> 'deferred' "
                "OR attempt.error_kind IS NOT NULL) "
                "FROM attempts AS attempt JOIN jobs AS job ON job.id = attempt.job_id "
                "WHERE job.state = 'succeeded' GROUP BY attempt.job_id"
            )
        ]
        failed, most_attempts = connection.execute(
            "SELECT COUNT(*) FILTER (WHERE state <> 'succeeded'), MAX(attempt) FROM jobs"
        ).fetchone()
    details = f"{deferred:,} deferrals, at most {most_attempts} attempt(s) used per job"
    return RunStats(f"{name}; {details}", (last - first) / 1000, calls, limited, failed, attempts)


def backroom_lane_run(
    base_url: str, lane: Lane, payloads: list[JSON], processes: int, concurrency: int
) -> RunStats:
    """The payloads as jobs, through `processes` burst workers sharing `concurrency` slots."""
    with _workspace(base_url, lane, payloads) as (database, config_path):
        workers = [
            _start_worker(database, config_path, concurrency // processes) for _ in range(processes)
        ]
        for worker in workers:
            if worker.wait(WORKER_TIMEOUT_S) != 0:
                raise RuntimeError("a benchmark worker failed")
        name = f"backroom, {processes} worker processes ({concurrency} slots, shared lane)"
        return _stats(name, database)


def _rss_kib(pid: int) -> tuple[int, int]:
    """(resident, peak resident) KiB of process `pid`, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def established_to(pid: int, port: int) -> int:
    """How many TCP connections process `pid` has established to `port`, from /proc.

    The process's sockets are the `socket:[inode]` links among its open files; the
    connection table of its network namespace gives each inode's state and remote port.
    """
    inodes = set()
    for descriptor in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(descriptor)
        except OSError:  # closed since it was listed
            continue
        if target.startswith("socket:["):
            inodes.add(target.removeprefix("socket:[").removesuffix("]"))
    established = 0
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if fields[3] == TCP_ESTABLISHED and remote_port == port and fields[9] in inodes:
                established += 1
    return established


def worker_memory(base_url: str, lane: Lane, payloads: list[JSON]) -> tuple[int, int]:
    """(RSS, peak RSS) in KiB of one worker once all `payloads` are calls in flight:
    once the worker holds that many established connections to `base_url`'s port.

    The mock must answer slowly enough for every call to be in flight at once.
    """
    port = int(base_url.rsplit(":", 1)[1].split("/", 1)[0])
    with _workspace(base_url, lane, payloads) as (database, config_path):
        worker = _start_worker(database, config_path, len(payloads))
        try:
            deadline = time.perf_counter() + WORKER_TIMEOUT_S
            while established_to(worker.pid, port) < len(payloads):
                if worker.poll() is not None or time.perf_counter() > deadline:
                    raise RuntimeError("the calls never were all in flight at once")
                time.sleep(MEMORY_POLL_S)
            return _rss_kib(worker.pid)
        finally:
            worker.terminate()
            worker.wait(WORKER_TIMEOUT_S)
