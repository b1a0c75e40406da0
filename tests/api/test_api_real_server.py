"""`backroom serve` as a real process on loopback, driven by the client and the CLI.

The server starts on a free port with a fresh database, prints its URL and the new
default tenant's key, answers real HTTP, runs jobs in its own worker, and stops
cleanly on SIGTERM.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from backroom import JobState
from backroom.cli.main import cli
from backroom.client import Client, Unauthorized
from backroom.clock import SystemClock

pytestmark = pytest.mark.slow

STARTUP_DEADLINE_MS = 20_000
CLI_STARTER = "from backroom.cli.main import main; main()"


@dataclass(frozen=True)
class Server:
    """A running `backroom serve`: its URL and the key it printed."""

    url: str
    key: str


def _read_welcome(process: subprocess.Popen[str]) -> tuple[str, str]:
    """The URL and key lines the server prints first (EOF means it died)."""
    assert process.stdout is not None
    url = key = ""
    while not (url and key):
        line = process.stdout.readline()
        assert line, "the server exited before printing its URL and key"
        if line.startswith("backroom is serving "):
            url = line.split()[3]
        if "export BACKROOM_API_KEY=" in line:
            key = line.split("=", 1)[1].strip()
    return url, key


def _wait_until_healthy(url: str, process: subprocess.Popen[str]) -> None:
    clock = SystemClock()
    deadline = clock.now() + STARTUP_DEADLINE_MS
    while clock.now() < deadline:
        assert process.poll() is None, "the server exited during start-up"
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)  # a real process is starting: poll it, up to the deadline
    pytest.fail(f"the server at {url} did not become healthy in time")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server process on a free loopback port; stopped with SIGTERM at the end."""
    folder: Path = tmp_path_factory.mktemp("server")
    command = [sys.executable, "-c", CLI_STARTER, "serve", "--port", "0"]
    command += ["--db", f"sqlite:///{folder / 'server.db'}", "--log-level", "warning"]
    with (folder / "stderr.txt").open("w") as errors:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True)
    try:
        url, key = _read_welcome(process)
        _wait_until_healthy(url, process)
        yield Server(url, key)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0, (folder / "stderr.txt").read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


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
