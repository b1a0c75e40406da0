"""`backroom queues|lanes list|pause|resume` on a local database: workers honour them."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backroom import App, run_until_idle
from backroom.cli.main import cli, main
from backroom.demo.tasks import register_demo_tasks


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A database URL for one test, with no server configured in the environment."""
    for name in ("BACKROOM_URL", "BACKROOM_API_KEY", "BACKROOM_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return f"sqlite:///{tmp_path / 'queues.db'}"


def run(*args: str) -> str:
    """Run the CLI; its output (the command must succeed)."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def _work(db: str) -> None:
    """Run the demo tasks' jobs until none is claimable, as a burst worker would."""

    async def burst() -> None:
        app = App(db)
        register_demo_tasks(app)
        async with app:
            await run_until_idle(app)

    asyncio.run(burst())


def _queues(db: str) -> dict[str, dict[str, object]]:
    listed = json.loads(run("queues", "list", "--json", "--db", db))
    return {queue["name"]: queue for queue in listed}


def test_a_paused_queue_waits_for_its_resume(db: str) -> None:
    paused = run("queues", "pause", "interactive", "--db", db)
    run("submit", "demo.noop", "1", "--db", db)
    run("submit", "demo.noop", "2", "--queue", "batch", "--db", db)
    _work(db)
    while_paused = _queues(db)
    table = run("queues", "list", "--db", db)
    resumed = run("queues", "resume", "interactive", "--db", db)
    _work(db)

    assert paused.startswith("paused queue 'interactive' since ")
    assert while_paused["interactive"]["paused"] is True
    assert while_paused["interactive"]["queued"] == 1
    assert (while_paused["batch"]["paused"], while_paused["batch"]["succeeded"]) == (False, 1)
    assert "interactive" in table and "yes" in table
    assert resumed.strip() == "resumed queue 'interactive': its jobs start again"
    assert _queues(db)["interactive"]["succeeded"] == 1
    assert "was not paused" in run("queues", "resume", "interactive", "--db", db)


def test_lanes_are_paused_listed_and_resumed(db: str) -> None:
    run("lanes", "pause", "openai/gpt-4o-mini", "--db", db)
    listed = json.loads(run("lanes", "list", "--json", "--db", db))
    run("lanes", "resume", "openai/gpt-4o-mini", "--db", db)

    assert [(lane["name"], lane["paused"]) for lane in listed] == [("openai/gpt-4o-mini", True)]
    assert json.loads(run("lanes", "list", "--json", "--db", db)) == []


def test_a_bad_name_is_one_line_on_stderr(
    db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["backroom", "queues", "pause", " ", "--db", db])

    with pytest.raises(SystemExit) as exited:
        main()

    assert exited.value.code == 1
    assert capsys.readouterr().err == (
        "backroom: error: path.name: must be 1 to 200 printable characters\n"
    )
