"""A worker on SQLite hears of another process's submission without waiting for its poll.

The worker process polls once a minute; this process submits through its own store,
which sends the worker a datagram, or (silent, as a process of another user would be)
leaves it to notice the commit by its `PRAGMA data_version` watch. Either way the job
runs within seconds; with neither, it would wait for the next poll. The bound is a
third of the poll interval, not a latency target.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from deadline_polls import wait_until

from backroom.core.job import JobState, NewJob
from backroom.store.sqlite.store import SqliteStore

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent
POLL_S = 60


async def submit_noop(path: str, *, datagram: bool = True) -> int:
    store = SqliteStore(path)
    if not datagram:
        store._wake_sockets = None  # no datagram: only the worker's watch can notice
    try:
        await store.migrate()
        result = await store.submit(NewJob("noop", None, 0), 0)
        return result.job.id
    finally:
        await store.close()


async def state_of(path: str, job_id: int) -> JobState | None:
    store = SqliteStore(path)
    try:
        job = await store.get(job_id)
        return None if job is None else job.state
    finally:
        await store.close()


@pytest.mark.parametrize("datagram", [True, False], ids=["datagram", "watch"])
def test_another_processs_submission_wakes_an_idle_worker_before_its_poll(
    tmp_path: Path, datagram: bool
) -> None:
    path = str(tmp_path / "jobs.db")
    first = asyncio.run(submit_noop(path))
    command = [sys.executable, "-m", "backroom", "worker", "--app", "crash_app:app"]
    options = ["--db", f"sqlite:///{path}", "--poll-interval", str(POLL_S)]
    worker = subprocess.Popen(
        [*command, *options],
        env={**os.environ, "PYTHONPATH": str(HERE)},
        stderr=subprocess.DEVNULL,
    )
    try:
        # The first job was queued before the worker started: it is up once that ran.
        wait_until(lambda: asyncio.run(state_of(path, first)) is JobState.SUCCEEDED, "start")
        submitted = time.monotonic()
        second = asyncio.run(submit_noop(path, datagram=datagram))
        wait_until(
            lambda: asyncio.run(state_of(path, second)) is JobState.SUCCEEDED,
            "the second job",
            seconds=POLL_S,
        )
        waited = time.monotonic() - submitted
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)

    assert waited < POLL_S / 3
