"""Two real worker processes on one database; one is killed with SIGKILL mid-job.

It runs on a SQLite file and on a PostgreSQL schema of its own.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from backroom import App, JobState

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent
JOBS = 6


@pytest.fixture
def db_url(database_url: str) -> str:
    """A SQLite file, then a PostgreSQL schema of this test's own (conftest)."""
    return database_url


def start_worker(db_url: str, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    command = [sys.executable, "-m", "backroom", "worker", "--app", "crash_app:app"]
    options = ["--db", db_url, "--concurrency", "1", "--lease", "1"]
    with log.open("wb") as stderr:
        return subprocess.Popen(command + options, env=env, stderr=stderr)


def wait_until(predicate, what: str, seconds: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def effects(log: Path) -> list[tuple[int, int]]:
    if not log.exists():
        return []
    rows = [line.split() for line in log.read_text().splitlines()]
    return [(int(job), int(pid)) for job, pid in rows]


def jobs(db_url: str) -> list:  # type: ignore[type-arg]
    async def read() -> list:  # type: ignore[type-arg]
        async with App(db_url) as app:
            return await app.list_jobs()

    return asyncio.run(read())


def victims_effect_stored(db_url: str, log: Path, victim_pid: int) -> bool:
    """True once a job of the victim's has run its effect and stored its `once` record."""
    victims_jobs = {job_id for job_id, pid in effects(log) if pid == victim_pid}
    return any(job.id in victims_jobs and job.progress == 0.5 for job in jobs(db_url))


def test_a_killed_workers_job_finishes_elsewhere_and_its_effect_runs_once(
    db_url: str, tmp_path: Path
) -> None:
    log = tmp_path / "effects.log"

    async def submit() -> None:
        async with App(db_url) as app:
            for n in range(JOBS):
                payload = {"log": str(log), "hold_ms": 1500, "n": n}
                await app.submit("effect-then-hold", payload, key=f"job-{n}")

    asyncio.run(submit())
    victim = start_worker(db_url, tmp_path / "victim.log")
    survivor = start_worker(db_url, tmp_path / "survivor.log")
    try:
        wait_until(lambda: victims_effect_stored(db_url, log, victim.pid), "the victim's effect")
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=10)
        wait_until(lambda: all(job.state.terminal for job in jobs(db_url)), "every job to end", 90)
    finally:
        for process in (victim, survivor):
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=20)

    final = jobs(db_url)
    assert len(final) == JOBS
    assert all(job.state is JobState.SUCCEEDED for job in final)
    counts = Counter(job_id for job_id, _ in effects(log))
    assert sorted(counts) == sorted(job.id for job in final)
    assert set(counts.values()) == {1}
    # The victim's job was finished by the survivor, which reused the stored effect.
    victims_jobs = {job_id for job_id, pid in effects(log) if pid == victim.pid}
    assert any(job.attempt == 2 and job.id in victims_jobs for job in final)
