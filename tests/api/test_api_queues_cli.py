"""`backroom queues|lanes ...` against a real `backroom serve`, whose workers honour them."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server_process import Server, serve_process
from typer.testing import CliRunner

from backroom.cli.main import cli
from backroom.clock import SystemClock

pytestmark = pytest.mark.slow

DEADLINE_MS = 20_000
ADMIN_KEY = "br_queues-admin-key"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with its in-process workers, on its own SQLite file, and an admin key."""
    folder: Path = tmp_path_factory.mktemp("queues")
    database = f"sqlite:///{folder / 'queues.db'}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BACKROOM_ADMIN_KEY", ADMIN_KEY)
        with serve_process(folder, "--db", database, "--log-level", "warning") as started:
            yield started


def run(server: Server, *args: str) -> str:
    """Run the CLI against the server as an admin; its output (the command must succeed)."""
    result = CliRunner().invoke(cli, [*args, "--url", server.url, "--api-key", ADMIN_KEY])
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def status(server: Server, job_id: int) -> str:
    """The job's state as the server tells it."""
    document: dict[str, Any] = json.loads(run(server, "status", str(job_id)))
    return str(document["status"])


def wait_until_succeeded(server: Server, job_id: int) -> None:
    """Poll the real server until the job succeeded, up to a deadline."""
    clock = SystemClock()
    deadline = clock.now() + DEADLINE_MS
    while status(server, job_id) != "succeeded":
        assert clock.now() < deadline, f"job {job_id} did not succeed in time"
        time.sleep(0.05)  # a real server's workers run the job: poll, up to the deadline


def test_the_servers_workers_hold_a_paused_queue_until_it_is_resumed(server: Server) -> None:
    paused = run(server, "queues", "pause", "interactive")
    held = int(run(server, "submit", "demo.noop", "1").split()[1])
    passing = int(run(server, "submit", "demo.noop", "2", "--queue", "batch").split()[1])

    # `interactive` comes first in every claim: had it not been paused, its job would
    # have started no later than the batch job.
    wait_until_succeeded(server, passing)
    assert status(server, held) == "queued"
    listed = {queue["name"]: queue for queue in json.loads(run(server, "queues", "list", "--json"))}
    assert listed["interactive"]["paused"] and listed["interactive"]["queued"] == 1

    resumed = run(server, "queues", "resume", "interactive")
    wait_until_succeeded(server, held)

    assert paused.startswith("paused queue 'interactive'")
    assert resumed.startswith("resumed queue 'interactive'")


def test_a_lane_is_paused_and_resumed_on_the_server(server: Server) -> None:
    run(server, "lanes", "pause", "openai/gpt-4o-mini")
    lanes = json.loads(run(server, "lanes", "list", "--json"))
    run(server, "lanes", "resume", "openai/gpt-4o-mini")

    assert {(lane["name"], lane["paused"]) for lane in lanes} >= {("openai/gpt-4o-mini", True)}
    after = json.loads(run(server, "lanes", "list", "--json"))
    assert all(not lane["paused"] for lane in after)


def test_a_tenants_key_may_not_pause_a_queue(server: Server) -> None:
    result = CliRunner().invoke(
        cli, ["queues", "pause", "batch", "--url", server.url, "--api-key", server.key]
    )

    assert result.exit_code == 1
    assert "only an admin may steer the queues" in str(result.exception)


def test_the_servers_idle_worker_is_listed_alive(server: Server) -> None:
    workers = json.loads(run(server, "workers", "list", "--json"))

    (alive,) = [worker for worker in workers if worker["state"] == "alive"]
    assert alive["pid"] == server.process.pid and alive["hostname"]
    table = run(server, "workers", "list")
    assert "alive" in table
