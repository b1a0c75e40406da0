"""`backroom webhooks ...` and `submit --webhook-url` against a real `backroom serve`."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server_process import Server, serve_process
from typer.testing import CliRunner

from backroom.cli.main import cli, main
from backroom.clock import SystemClock

pytestmark = pytest.mark.slow

HOOK = "http://127.0.0.1:9/hook"
DEADLINE_MS = 20_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server that may send webhooks to loopback (nothing listens on port 9)."""
    folder: Path = tmp_path_factory.mktemp("hooks")
    database = f"sqlite:///{folder / 'hooks.db'}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BACKROOM_WEBHOOK_ALLOW", "127.0.0.1")
        with serve_process(folder, "--db", database, "--log-level", "warning") as started:
            yield started


def run(server: Server, *args: str) -> str:
    """Run the CLI against the server; its output (the command must succeed)."""
    result = CliRunner().invoke(cli, [*args, "--url", server.url, "--api-key", server.key])
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def deliveries_of(server: Server, job_id: int, count: int) -> list[dict[str, Any]]:
    """The job's deliveries once there are `count` (the server's dispatcher makes them)."""
    clock = SystemClock()
    deadline = clock.now() + DEADLINE_MS
    while True:
        found: list[dict[str, Any]] = json.loads(run(server, "webhooks", "deliveries", str(job_id)))
        if len(found) >= count or clock.now() > deadline:
            return found
        time.sleep(0.05)  # a real server dispatches: poll it, up to the deadline


def test_subscriptions_secrets_and_deliveries_over_http(server: Server) -> None:
    created = run(server, "webhooks", "create", HOOK, "--event", "job.succeeded")
    subscription_id = created.split(":")[0].split()[1]
    listed = run(server, "webhooks", "list")
    secret = run(server, "webhooks", "secret").strip()
    submitted = run(server, "submit", "demo.noop", "--wait", "--webhook-url", HOOK + "/job")
    job_id = int(submitted.split()[1])

    found = deliveries_of(server, job_id, 2)
    again = run(server, "webhooks", "redeliver", str(found[0]["id"]))
    rotated = run(server, "webhooks", "rotate", subscription_id)
    new_secret = run(server, "webhooks", "secret", "--rotate")
    deleted = run(server, "webhooks", "delete", subscription_id)

    assert created.strip().splitlines()[-1].startswith("whsec_")
    assert "default" in listed and "yes" in listed
    assert secret.startswith("whsec_")
    assert sorted((item["url"], item["event_type"]) for item in found) == [
        (HOOK, "job.succeeded"),
        (HOOK + "/job", "job.succeeded"),
    ]
    assert again.startswith(f"delivery {found[0]['id']} queued again (webhook-id msg_")
    assert "the previous secret also signs until" in rotated
    assert new_secret.split()[0] != secret
    assert deleted.strip() == f"deleted webhook {subscription_id}"
    assert "default" not in run(server, "webhooks", "list")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["webhooks", "create", "http://10.1.2.3/x", "--event", "job.failed"], "10.1.2.3"),
        (["submit", "demo.noop", "--webhook-url", "http://[::1]:9/"], "webhook_url"),
        (["webhooks", "rotate", "999"], "no webhook subscription 999"),
        (["webhooks", "deliveries", "999"], "no job 999"),
    ],
)
def test_refusals_are_one_line(
    server: Server,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    monkeypatch.setattr(
        sys, "argv", ["backroom", *args, "--url", server.url, "--api-key", server.key]
    )

    with pytest.raises(SystemExit) as exited:
        main()

    err = capsys.readouterr().err
    assert exited.value.code == 1
    assert err.startswith("backroom: error: ") and err.count("\n") == 1, err
    assert message in err
