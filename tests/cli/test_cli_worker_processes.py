"""`backroom worker --processes N`: N workers from one command, each its own worker (its
id, its jobs), stopped together by one SIGTERM, or one by one with --burst."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import USER_MODULE, clean_env
from typer.testing import CliRunner

from backroom import App, JobState
from backroom.cli.main import cli

pytestmark = pytest.mark.slow

BACKROOM = str(Path(sys.executable).parent / "backroom")
DEADLINE_S = 60.0


def _workers(url: str) -> list[dict[str, object]]:
    result = CliRunner().invoke(cli, ["workers", "list", "--json", "--db", url])
    assert result.exit_code == 0, result.output
    listed: list[dict[str, object]] = json.loads(result.output)
    return listed


async def _submit(url: str, count: int) -> list[int]:
    async with App(url) as app:
        return [(await app.submit("shout", f"hi {n}")).job.id for n in range(count)]


async def _states(url: str, ids: list[int]) -> list[JobState]:
    async with App(url) as app:
        return [(await app.get(job_id)).state for job_id in ids]


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, str]:
    """A user's folder with `myjobs.py`, and its SQLite database's URL."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    (tmp_path / "myjobs.py").write_text(USER_MODULE.format(url=url))
    return tmp_path, url


def test_a_burst_runs_every_job_in_two_workers_that_each_end_once_idle(
    project: tuple[Path, str],
) -> None:
    folder, url = project
    ids = asyncio.run(_submit(url, 40))

    done = subprocess.run(
        [BACKROOM, "worker", "--app", "myjobs:app", "--burst", "--processes", "2"],
        check=False,
        cwd=folder,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )

    assert done.returncode == 0, done.stderr
    assert asyncio.run(_states(url, ids)) == [JobState.SUCCEEDED] * len(ids)
    workers = _workers(url)
    assert [worker["state"] for worker in workers] == ["stopped", "stopped"]
    assert len({worker["pid"] for worker in workers}) == 2
    assert done.stderr.count(" started: store ") == 2


def test_one_sigterm_stops_every_worker_of_the_command(project: tuple[Path, str]) -> None:
    folder, url = project
    asyncio.run(_submit(url, 0))  # the schema, before two processes race to make it
    command = [BACKROOM, "worker", "--app", "myjobs:app", "--processes", "2"]
    process = subprocess.Popen(
        command, cwd=folder, env=clean_env(), stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + DEADLINE_S
        while [worker["state"] for worker in _workers(url)] != ["alive", "alive"]:
            assert time.monotonic() < deadline, "two workers never showed alive"
            time.sleep(0.05)
        ids = asyncio.run(_submit(url, 10))
        while asyncio.run(_states(url, ids)) != [JobState.SUCCEEDED] * len(ids):
            assert time.monotonic() < deadline, "the jobs never ran"
            time.sleep(0.05)

        process.send_signal(signal.SIGTERM)
        _, errors = process.communicate(timeout=DEADLINE_S)
    finally:
        process.kill()

    assert process.returncode == 0, errors
    assert [worker["state"] for worker in _workers(url)] == ["stopped", "stopped"]
    assert errors.count("stopped: 0 job(s) handed back to the queue") == 2
