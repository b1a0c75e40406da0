"""A 429 pauses its lane for every worker process: the other one makes no call meanwhile.

Two `backroom worker` processes share one database (SQLite or PostgreSQL) and one
lane (at most one call at a time, so calls never overlap). Worker 1 serves queue
`first`, whose job is scripted to get a 429 with `retry-after-ms`; worker 2 serves
queue `second`, whose jobs are queued as soon as the mock has answered that 429. The
mock logs when every call arrived: none may arrive while the lane is paused.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from deadline_polls import serving, until

from backroom import App
from backroom.clock import SystemClock
from backroom.core.job import JobState
from backroom.llm.config import load_llm_config
from backroom.llm.mock.server import MockConfig, create_mock_app
from backroom.llm.task import RESPOND_TASK, register_llm_tasks
from backroom.store.protocol import JobFilter

HERE = Path(__file__).resolve().parent
PAUSE_MS = 2_000
DEADLINE_MS = 60_000
POLL_MS = 20
CLOCK = SystemClock()
REFUSED = f"[fault:429:first=1:retry-after-ms={PAUSE_MS}] first"


class CallLog:
    """An ASGI app around the mock that logs each call: (arrival ms, response status)."""

    def __init__(self, mock: Any) -> None:
        self._mock = mock
        self.calls: list[tuple[int, int]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self._mock(scope, receive, send)
            return
        arrived = CLOCK.now()

        async def logged_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.calls.append((arrived, message["status"]))
            await send(message)

        await self._mock(scope, receive, logged_send)


@contextmanager
def logging_mock() -> Iterator[tuple[str, CallLog]]:
    """The mock on a loopback port, behind a `CallLog`: (base URL, log)."""
    log = CallLog(create_mock_app(MockConfig(), CLOCK))
    with serving(log) as base_url:
        yield base_url, log


def start_worker(db: str, config: Path, queue: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(HERE), "BACKROOM_CONFIG": str(config)}
    command = [sys.executable, "-m", "backroom", "worker", "--app", "llm_worker_app:app"]
    return subprocess.Popen([*command, "--db", db, "--queues", queue], env=env)


async def submit(db: str, config: Path, queue: str, prompts: list[str]) -> None:
    app = App(db)
    register_llm_tasks(app, load_llm_config(config, {}))
    async with app:
        for prompt in prompts:
            payload = {"model": "shared", "input": prompt}
            await app.submit(RESPOND_TASK, payload, queue=queue, tenant="acme")


@pytest.fixture
def db(database_url: str) -> str:
    """A fresh database on each backend (conftest)."""
    return database_url


@pytest.mark.slow
async def test_a_429_pauses_the_lane_for_the_other_worker_process(db: str, tmp_path: Path) -> None:
    config = tmp_path / "llm.toml"
    with logging_mock() as (base_url, log):
        config.write_text(
            f'[providers.mock]\nbase_url = "{base_url}"\n\n'
            '[providers.mock.models."shared"]\nmax_concurrency = 1\n'
        )
        await submit(db, config, "first", [REFUSED])
        workers = [start_worker(db, config, queue) for queue in ("first", "second")]
        try:

            async def refused() -> bool:
                return any(status == 429 for _, status in log.calls)

            await until(refused, "the 429")
            await submit(db, config, "second", [f"second {number}" for number in range(3)])

            async def all_done() -> bool:
                async with App(db) as app:
                    jobs = await app.list_jobs(JobFilter(limit=10))
                return all(job.state is JobState.SUCCEEDED for job in jobs)

            await until(all_done, "every job to succeed")
        finally:
            for worker in workers:
                worker.terminate()
            for worker in workers:
                worker.wait(30)

    workers_of: dict[str, set[str]] = {"first": set(), "second": set()}
    async with App(db) as app:
        for job in await app.list_jobs(JobFilter(limit=10)):
            workers_of[job.queue] |= {attempt.worker_id for attempt in await app.attempts(job.id)}
    (refused_at,) = [arrived for arrived, status in log.calls if status == 429]
    later = [arrived for arrived, _ in log.calls if arrived > refused_at]
    # The first job's retry and the second worker's three calls, none while paused.
    assert len(later) == 4
    assert min(later) >= refused_at + PAUSE_MS
    assert len(workers_of["first"]) == len(workers_of["second"]) == 1
    assert workers_of["first"] != workers_of["second"]
