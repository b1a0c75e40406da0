"""`backroom worker` as a new user runs it: their own module from the current folder, the
App's own database, the built-in tasks in a worker of their own, and its log lines."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import pytest
from cli_support import USER_MODULE, clean_env
from typer.testing import CliRunner

from backroom import App, JobState
from backroom.cli.main import cli

pytestmark = pytest.mark.slow

BACKROOM = str(Path(sys.executable).parent / "backroom")


@contextlib.contextmanager
def _importable_module(folder: Path, name: str, url: str) -> Iterator[str]:
    """`name`.py in `folder`, importable in this process while the block runs: `name:app`."""
    (folder / f"{name}.py").write_text(USER_MODULE.format(url=url))
    sys.path.insert(0, str(folder))
    try:
        yield f"{name}:app"
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(name, None)


async def _submit(url: str, task: str, payload: object) -> int:
    async with App(url) as app:
        return (await app.submit(task, payload)).job.id


async def _state(url: str, job_id: int) -> tuple[JobState, object]:
    async with App(url) as app:
        job = await app.get(job_id)
        return job.state, job.result


def test_a_worker_imports_the_app_from_the_current_folder_and_uses_its_database(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'own.db'}"
    (tmp_path / "myjobs.py").write_text(USER_MODULE.format(url=url))
    job_id = asyncio.run(_submit(url, "shout", "hi"))

    done = subprocess.run(
        [BACKROOM, "worker", "--app", "myjobs:app", "--burst"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert asyncio.run(_state(url, job_id)) == (JobState.SUCCEEDED, "HI")
    assert f"database {url} (from the app)" in done.stderr
    assert not (tmp_path / "backroom.db").exists()


def test_db_and_the_environment_override_the_apps_database(tmp_path: Path) -> None:
    own, other = f"sqlite:///{tmp_path / 'own.db'}", f"sqlite:///{tmp_path / 'other.db'}"
    job_id = asyncio.run(_submit(other, "shout", "env"))
    with _importable_module(tmp_path, "envjobs", own) as reference:
        result = CliRunner().invoke(
            cli,
            ["worker", "--app", reference, "--burst", "--log-json"],
            env={"BACKROOM_DATABASE_URL": other},
        )

    assert result.exit_code == 0, result.output
    assert asyncio.run(_state(other, job_id)) == (JobState.SUCCEEDED, "ENV")
    messages = [json.loads(line)["message"] for line in result.output.splitlines()]
    assert f"database {other} (from BACKROOM_DATABASE_URL)" in messages
    (start,) = [message for message in messages if " started: " in message]
    assert start.startswith(f"backroom {version('backroom')} worker ")
    # Every worker also sends webhook deliveries (backroom.webhooks).
    tasks = "tasks shout, webhooks.deliver"
    assert start.endswith(f"started: store {other}, queues all, concurrency 200, {tasks}")


def test_the_builtin_app_runs_the_builtin_tasks_in_a_worker_of_its_own(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    noop = asyncio.run(_submit(url, "demo.noop", None))
    respond = asyncio.run(_submit(url, "llm.respond", {"model": "offline-mini", "input": "hello"}))

    result = CliRunner().invoke(
        cli,
        ["worker", "--app", "backroom.builtin:app", "--burst", "--db", url],
        env={"BACKROOM_CONFIG": None, "OPENAI_API_KEY": None, "OPENAI_BASE_URL": None},
    )

    assert result.exit_code == 0, result.output
    assert asyncio.run(_state(url, noop))[0] is JobState.SUCCEEDED
    state, answer = asyncio.run(_state(url, respond))
    assert state is JobState.SUCCEEDED
    assert isinstance(answer, dict)
    assert answer["output_text"]


def test_builtin_tasks_join_any_app_and_a_worker_with_no_tasks_is_refused(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'mixed.db'}"
    job_id = asyncio.run(_submit(url, "demo.noop", None))
    runner = CliRunner()

    with _importable_module(tmp_path, "mixedjobs", url) as reference:
        with_builtin = runner.invoke(
            cli, ["worker", "--app", reference, "--builtin-tasks", "--burst", "--db", url]
        )
    without = runner.invoke(cli, ["worker", "--burst", "--db", url])

    assert with_builtin.exit_code == 0, with_builtin.output
    assert asyncio.run(_state(url, job_id))[0] is JobState.SUCCEEDED
    assert without.exit_code != 0
    assert "--builtin-tasks" in str(without.exception)
