"""A worker claims only the tasks it has: another task's job waits, queued and counted,
for a worker that has it; a local submission of a task no App has is refused."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from backroom import App, JobContext, JobState, SimClock, run_until_idle
from backroom.cli.main import cli
from backroom.service.metrics import exposition
from backroom.store.sqlite.store import SqliteStore

START = 1_700_000_000_000


def test_a_job_of_a_task_the_worker_lacks_stays_queued_and_is_counted() -> None:
    clock = SimClock(START)
    store = SqliteStore.from_url("sqlite://:memory:")
    submitter = App(store=store, clock=clock)
    worker_app = App(store=store, clock=clock)

    @worker_app.task("echo")
    async def echo(_ctx: JobContext, payload: Any) -> Any:
        return payload

    async def scenario() -> tuple[JobState, JobState, int, bytes]:
        async with submitter:
            shout = (await submitter.submit("shout", "hi")).job
            echoed = (await submitter.submit("echo", "hi")).job
            await run_until_idle(worker_app)  # a burst worker: it must also come back
            await clock.sleep(60_000)
            metrics = await exposition(submitter)
            left = await submitter.get(shout.id)
            return left.state, (await submitter.get(echoed.id)).state, left.attempt, metrics

    shout_state, echo_state, attempts, metrics = clock.run(scenario())

    assert (shout_state, attempts, echo_state) == (JobState.QUEUED, 0, JobState.SUCCEEDED)
    text = metrics.decode()
    assert 'backroom_queued_jobs_by_task{task="shout"} 1.0' in text
    assert 'backroom_oldest_queued_job_age_by_task_seconds{task="shout"} 60.0' in text
    assert 'task="echo"' not in text


def test_a_local_submission_names_a_task_of_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = f"sqlite:///{tmp_path / 'local.db'}"
    monkeypatch.chdir(tmp_path)  # `--app` imports from the current folder
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "localjobs", raising=False)
    (tmp_path / "localjobs.py").write_text(
        "from backroom import App\napp = App()\n\n"
        "@app.task('shout')\nasync def shout(ctx, text):\n    return text.upper()\n"
    )
    runner = CliRunner()

    unknown = runner.invoke(cli, ["submit", "shout", '"hi"', "--db", db])
    with_app = runner.invoke(cli, ["submit", "shout", '"hi"', "--db", db, "--app", "localjobs:app"])
    builtin = runner.invoke(cli, ["submit", "demo.noop", "--db", db])

    assert unknown.exit_code == 1
    assert "unknown task 'shout'" in str(unknown.exception)
    assert with_app.exit_code == 0, with_app.output
    assert builtin.exit_code == 0, builtin.output
