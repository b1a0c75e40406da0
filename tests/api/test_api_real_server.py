"""`backroom serve` as a real process on loopback, driven by the client and the CLI.

The server starts on a free port with a fresh database, prints its URL and the new
default tenant's key, answers real HTTP, runs jobs in its own worker, and stops
cleanly on SIGTERM.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from server_process import Server, serve_process
from typer.testing import CliRunner

from backroom import JobState
from backroom.cli.main import cli
from backroom.client import Client, Unauthorized

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server process on a free loopback port; stopped with SIGTERM at the end."""
    folder: Path = tmp_path_factory.mktemp("server")
    database = f"sqlite:///{folder / 'server.db'}"
    with serve_process(folder, "--db", database, "--log-level", "warning") as server:
        yield server


def test_the_client_submits_and_waits_for_jobs(server: Server) -> None:
    progress: list[float] = []
    with Client(server.url, server.key) as client:
        noop = client.submit("demo.noop", None)
        replay = client.submit("demo.noop", None, key=noop.idempotency_key)
        summary = client.submit("demo.summarize", {"text": "one two three four five"})
        first = client.wait(noop.job.id, timeout_s=30)
        second = client.wait(
            summary.job.id, timeout_s=30, on_update=lambda job: progress.append(job.progress or 0)
        )
        listed = client.list(status=[JobState.SUCCEEDED])

    assert (noop.created, replay.created, replay.job.id) == (True, False, noop.job.id)
    assert first.status is JobState.SUCCEEDED
    assert second.result == {"summary": "one two three four five", "words": 5}
    assert progress == sorted(progress)
    assert {job.id for job in listed.jobs} == {noop.job.id, summary.job.id}


def test_a_wrong_key_is_refused_over_http(server: Server) -> None:
    with Client(server.url, "br_not-a-key") as client, pytest.raises(Unauthorized):
        client.get(1)


def test_the_cli_talks_to_the_server(server: Server) -> None:
    env = {"BACKROOM_URL": server.url, "BACKROOM_API_KEY": server.key}
    runner = CliRunner()

    submitted = runner.invoke(cli, ["submit", "demo.noop", '{"x": 1}', "--wait"], env=env)
    listed = runner.invoke(cli, ["jobs", "--url", server.url, "--api-key", server.key])

    assert submitted.exit_code == 0, submitted.output
    assert "queued (new)" in submitted.output
    assert submitted.output.strip().endswith("null")
    assert listed.exit_code == 0
    assert "demo.noop" in listed.output
