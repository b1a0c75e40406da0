"""Two real worker processes on one SQLite file; one is killed with SIGKILL mid-job."""

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
from backroom.store.sqlite import SqliteStore

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent
JOBS = 6


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
        async with App(store=SqliteStore.from_url(db_url)) as app:
            return await app.list_jobs()

    return asyncio.run(read())


def test_a_killed_workers_job_finishes_elsewhere_and_its_effect_runs_once(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'jobs.db'}"
    log = tmp_path / "effects.log"

    async def submit() -> None:
        async with App(store=SqliteStore.from_url(db_url)) as app:
            for n in range(JOBS):
                payload = {"log": str(log), "hold_ms": 1500, "n": n}
                await app.submit("effect-then-hold", payload, key=f"job-{n}")

    asyncio.run(submit())
    victim = start_worker(db_url, tmp_path / "victim.log")
    survivor = start_worker(db_url, tmp_path / "survivor.log")
    try:
        wait_until(lambda: any(pid == victim.pid for _, pid in effects(log)), "the victim's effect")
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
