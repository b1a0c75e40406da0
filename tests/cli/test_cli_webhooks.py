"""`backroom webhooks ...` and `submit --webhook-url` on a local database, as a tenant."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backroom import App
from backroom.cli.main import cli, main
from backroom.webhooks.dispatcher import WebhookDispatcher

HOOK = "http://127.0.0.1:9/hook"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A database with tenant `acme`; loopback allowed for webhooks, no server configured."""
    for name in ("BACKROOM_URL", "BACKROOM_API_KEY", "BACKROOM_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BACKROOM_WEBHOOK_ALLOW", "127.0.0.1")
    url = f"sqlite:///{tmp_path / 'hooks.db'}"
    run("tenants", "create", "acme", "--db", url)
    return url


def run(*args: str) -> str:
    """Run the CLI; its output (the command must succeed)."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def error_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> str:
    """Run the CLI as `backroom` does; the one line it printed on stderr (it must fail)."""
    monkeypatch.setattr(sys, "argv", ["backroom", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


async def _dispatch(db: str) -> None:
    """Turn the feed's events into deliveries, as a worker's dispatcher would."""
    async with App(db) as app:
        dispatcher = WebhookDispatcher(app.store, app.clock, lambda job_id: f"/v1/jobs/{job_id}")
        await dispatcher.dispatch_once()


def test_subscriptions_are_created_listed_rotated_and_deleted(db: str) -> None:
    created = run(
        "webhooks", "create", HOOK, "--event", "job.succeeded", "--event", "job.failed",
        "--task", "demo.noop", "--tenant", "acme", "--db", db,
    )  # fmt: skip
    listed = run("webhooks", "list", "--tenant", "acme", "--db", db)
    rotated = run("webhooks", "rotate", "1", "--tenant", "acme", "--db", db)
    deleted = run("webhooks", "delete", "1", "--tenant", "acme", "--db", db)
    after = run("webhooks", "list", "--db", db)

    first_secret = created.strip().splitlines()[-1]
    assert created.startswith("webhook 1: http://127.0.0.1:9/hook (job.succeeded, job.failed)")
    assert first_secret.startswith("whsec_")
    assert "acme" in listed and "demo.noop" in listed and "yes" in listed
    new_secret = rotated.strip().splitlines()[-2]
    assert new_secret.startswith("whsec_") and new_secret != first_secret
    assert "the previous secret also signs until" in rotated
    assert deleted.strip() == "deleted webhook 1"
    assert "acme" not in after


def test_the_tenant_secret_is_stable_until_rotated(db: str) -> None:
    first = run("webhooks", "secret", "--tenant", "acme", "--db", db).strip()
    again = run("webhooks", "secret", "--tenant", "acme", "--db", db).strip()
    rotated = run("webhooks", "secret", "--rotate", "--tenant", "acme", "--db", db)

    assert first.startswith("whsec_") and first == again
    new = rotated.splitlines()[0]
    assert new.startswith("whsec_") and new != first
    assert "the previous secret also signs until" in rotated


def test_a_job_webhook_url_makes_a_delivery_that_can_be_sent_again(db: str) -> None:
    asyncio.run(_dispatch(db))  # the dispatcher reads the feed from where it first looked
    run("submit", "demo.noop", "--webhook-url", HOOK, "--tenant", "acme", "--db", db)
    run("cancel", "1", "--db", db)
    asyncio.run(_dispatch(db))

    (delivery,) = json.loads(run("webhooks", "deliveries", "1", "--tenant", "acme", "--db", db))
    again = run("webhooks", "redeliver", str(delivery["id"]), "--tenant", "acme", "--db", db)

    assert (delivery["job_id"], delivery["event_type"]) == (1, "job.cancelled")
    assert (delivery["url"], delivery["subscription_id"]) == (HOOK, None)
    assert (
        again.strip()
        == f"delivery {delivery['id']} queued again (webhook-id {delivery['webhook_id']})"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["webhooks", "create", HOOK, "--event", "job.succeeded"], "name it with --tenant"),
        (["webhooks", "secret"], "name it with --tenant"),
        (
            [
                "webhooks",
                "create",
                "http://10.1.2.3/x",
                "--event",
                "job.failed",
                "--tenant",
                "acme",
            ],
            "body.url: webhook host '10.1.2.3' resolves to a non-public address",
        ),
        (
            ["webhooks", "create", HOOK, "--event", "job.started", "--tenant", "acme"],
            "body.event_types: choose from",
        ),
        (
            ["submit", "demo.noop", "--webhook-url", "http://169.254.169.254/", "--tenant", "acme"],
            "body.webhook_url: webhook host '169.254.169.254'",
        ),
        (["webhooks", "delete", "7", "--tenant", "acme"], "no webhook subscription 7"),
        (["webhooks", "redeliver", "7"], "no delivery 7"),
        (["webhooks", "deliveries", "7"], "no job 7"),
    ],
)
def test_refusals_are_one_line(
    db: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    err = error_line(monkeypatch, capsys, *args, "--db", db)

    assert err.startswith("backroom: error: ")
    assert message in err
