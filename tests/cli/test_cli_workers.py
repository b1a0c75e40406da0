"""`backroom workers list` on a local database: every worker from its heartbeats."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backroom import App, WorkerConfig, run_until_idle
from backroom.cli.main import cli
from backroom.core.workers import WorkerInfo


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A database URL for one test, with no server configured in the environment."""
    for name in ("BACKROOM_URL", "BACKROOM_API_KEY", "BACKROOM_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return f"sqlite:///{tmp_path / 'workers.db'}"


def run(*args: str) -> str:
    """Run the CLI; its output (the command must succeed)."""
    result = CliRunner().invoke(cli, list(args), terminal_width=200)
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def _register(db: str) -> None:
    """A worker that ran and stopped, and one still beating, idle."""

    async def workers() -> None:
        app = App(db)
        async with app:
            await run_until_idle(app, WorkerConfig(worker_id="burst-1"))
            now = app.clock.now()
            info = WorkerInfo("idle-1", "host-a", 4242, ("batch",), 5, 10_000, now)
            await app.store.worker_beat(info, now)

    asyncio.run(workers())


def test_the_list_shows_each_workers_state_host_and_queues(db: str) -> None:
    _register(db)

    listed = {
        worker["id"]: worker for worker in json.loads(run("workers", "list", "--json", "--db", db))
    }
    table = run("workers", "list", "--db", db)

    assert listed["burst-1"]["state"] == "stopped"
    assert (listed["idle-1"]["state"], listed["idle-1"]["pid"]) == ("alive", 4242)
    idle_line = next(line for line in table.splitlines() if "idle-1" in line)
    assert all(word in idle_line for word in ("alive", "host-a", "4242", "batch", "idle"))


def test_an_empty_registry_lists_nothing(db: str) -> None:
    assert json.loads(run("workers", "list", "--json", "--db", db)) == []
