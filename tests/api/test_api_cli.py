"""The CLI on a local database: tenants and keys, job commands, one-line errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backroom.cli.main import cli, main


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A database URL for one test, with no server configured in the environment."""
    for name in ("BACKROOM_URL", "BACKROOM_API_KEY", "BACKROOM_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return f"sqlite:///{tmp_path / 'cli.db'}"


def run(*args: str) -> str:
    """Run the CLI; its output (the command must succeed)."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def test_tenants_are_created_listed_and_revoked(db: str) -> None:
    created = run("tenants", "create", "acme", "--max-queued", "5", "--db", db)
    run("tenants", "create", "root", "--admin", "--db", db)
    listed = run("tenants", "list", "--db", db)
    revoked = run("tenants", "revoke", "acme", "--db", db)

    key = created.strip().splitlines()[-1]
    assert key.startswith("br_")
    assert "acme" in listed
    assert "5" in listed
    assert "root" in listed
    assert "yes" in listed
    assert "revoked 1 key(s)" in revoked


def test_errors_are_one_line_and_exit_1(
    db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["backroom", "tenants", "revoke", "nobody", "--db", db])

    with pytest.raises(SystemExit) as exited:
        main()

    assert exited.value.code == 1
    assert capsys.readouterr().err == "backroom: error: tenant 'nobody' has no active keys\n"


def test_job_commands_work_on_the_local_database(db: str) -> None:
    submitted = run("submit", "demo.noop", '{"a": 1}', "--key", "k", "--db", db)
    again = run("submit", "demo.noop", '{"a": 1}', "--key", "k", "--db", db)
    status = json.loads(run("status", "1", "--db", db))
    listed = run("jobs", "--state", "queued", "--db", db)
    cancelled = run("cancel", "1", "--db", db)

    assert submitted.strip() == "job 1 queued (new)"
    assert again.strip() == "job 1 queued (duplicate, same job)"
    assert (status["task"], status["status"]) == ("demo.noop", "queued")
    assert "demo.noop" in listed
    assert cancelled.strip() == "job 1: cancelled"
    assert "redrove 0 job(s)" in run("redrive", "--all", "--db", db)
    assert "demo.noop" not in run("dead-letters", "--db", db)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--url", "http://127.0.0.1:9"], "--url needs an API key"),
        (["--url", "127.0.0.1:8000", "--api-key", "k"], "must be an http:// or https:// URL"),
        (["--url", "http://x", "--api-key", "k", "--tenant", "t"], "--tenant is for the local"),
    ],
)
def test_client_mode_needs_a_url_and_a_key(db: str, args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["status", "1", *args])

    assert result.exit_code == 1
    assert message in str(result.exception)


def fails(*args: str) -> str:
    """Run the CLI; the one-line error of a command that must fail with exit status 1."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 1, result.output
    return str(result.exception)


def test_the_local_mode_answers_as_the_api_does(db: str) -> None:
    run("submit", "demo.noop", "1", "--key", "k", "--db", db)

    reused = fails("submit", "demo.noop", "2", "--key", "k", "--db", db)
    missing = fails("status", "99", "--db", db)
    not_failed = fails("redrive", "1", "--db", db)

    assert reused == "Idempotency-Key 'k' was already used with a different request body"
    assert missing == "job 99 not found"
    assert not_failed == "job 1 is queued and only failed jobs can be redriven"


def test_a_tenant_on_the_local_database_sees_only_its_own_jobs(db: str) -> None:
    run("submit", "demo.noop", "--tenant", "acme", "--db", db)
    run("submit", "demo.noop", "--tenant", "globex", "--db", db)

    acme = json.loads(run("status", "1", "--tenant", "acme", "--db", db))
    hidden = fails("status", "1", "--tenant", "globex", "--db", db)
    everyone = run("jobs", "--db", db)

    assert acme["tenant"] == "acme"
    assert hidden == "job 1 not found"
    assert everyone.count("demo.noop") == 2
