"""A worker SIGKILLed while it waits for a background response: one paid call only.

A `backroom worker` process sends the job's call in background mode to the mock (whose
answer takes 3 s), records the response id, and is killed (SIGKILL) while it polls.
Once its lease runs out a second worker process takes the job up: it retrieves the
same response rather than creating another, so the mock made one response, the job
used one call, and that call is recorded at what it used (not an estimate).
"""

from __future__ import annotations

import os
import signal
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
from backroom.llm.mock.server import MockConfig, create_mock_app
from backroom.llm.task import RESPOND_TASK

HERE = Path(__file__).resolve().parent
DEADLINE_MS = 60_000
POLL_MS = 50
CLOCK = SystemClock()


class CreationCount:
    """An ASGI app around the mock that counts the responses created (POST /v1/responses)."""

    def __init__(self, mock: Any) -> None:
        self._mock = mock
        self.created = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            self.created += scope["path"] == "/v1/responses"
        await self._mock(scope, receive, send)


@contextmanager
def counting_mock() -> Iterator[tuple[str, CreationCount]]:
    """The mock (answers after 3 s) on a loopback port: (base URL, creation count)."""
    counter = CreationCount(create_mock_app(MockConfig(latency_ms=3_000), CLOCK))
    with serving(counter) as base_url:
        yield base_url, counter


def start_worker(db: str, config: Path) -> subprocess.Popen[bytes]:
    path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "BACKROOM_CONFIG": str(config)}
    command = [sys.executable, "-m", "backroom", "worker", "--app", "llm_worker_app:app"]
    return subprocess.Popen(
        [*command, "--db", db, "--lease", "1", "--poll-interval", "0.05"], env=env
    )


@pytest.mark.slow
async def test_a_killed_worker_s_background_response_is_taken_up_not_paid_twice(
    database_url: str, tmp_path: Path
) -> None:
    config = tmp_path / "llm.toml"
    db = database_url
    with counting_mock() as (base_url, mock):
        config.write_text(
            f'[providers.mock]\nbase_url = "{base_url}"\nbackground = true\n'
            '[providers.mock.models."priced"]\n'
            "input_usd_per_million = 2.5\noutput_usd_per_million = 10\n"
        )
        async with App(db) as app:
            payload = {"model": "priced", "input": "survive a crash"}
            job_id = (await app.submit(RESPOND_TASK, payload)).job.id
            first = start_worker(db, config)
            try:

                async def response_noted() -> bool:
                    calls = await app.store.open_calls(job_id)
                    return bool(calls) and calls[0].response_id is not None

                await until(response_noted, "the first worker to note its response id")
            finally:
                first.send_signal(signal.SIGKILL)
                first.wait(30)
            (left,) = await app.store.open_calls(job_id)
            second = start_worker(db, config)
            try:

                async def finished() -> bool:
                    return (await app.get(job_id)).state.terminal

                await until(finished, "the second worker to finish the job")
            finally:
                second.terminate()
                second.wait(30)
            job = await app.get(job_id)
            totals = await app.store.usage_totals(job_id)
            attempts = await app.attempts(job_id)

    assert job.state is JobState.SUCCEEDED
    assert job.result["response_id"] == left.response_id
    assert mock.created == 1
    assert (totals.calls, totals.estimated_calls) == (1, 0)
    assert len({attempt.worker_id for attempt in attempts}) == 2
