"""`jobs --json` and `--wide`, and `submit --wait` with no worker: a notice, a timeout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backroom.cli import progress
from backroom.cli.main import cli


def _db_with_a_job(tmp_path: Path) -> str:
    db = f"sqlite:///{tmp_path / 'jobs.db'}"
    submitted = CliRunner().invoke(cli, ["submit", "demo.noop", "--db", db])
    assert submitted.exit_code == 0, submitted.output
    return db


def test_jobs_prints_json_or_a_table_cut_at_no_width(tmp_path: Path) -> None:
    db = _db_with_a_job(tmp_path)
    runner = CliRunner()

    as_json = runner.invoke(cli, ["jobs", "--json", "--db", db])
    narrow = runner.invoke(cli, ["jobs", "--db", db])
    wide = runner.invoke(cli, ["jobs", "--wide", "--db", db])

    (document,) = json.loads(as_json.output)
    assert (document["task"], document["status"]) == ("demo.noop", "queued")
    created = document["created_at"]
    assert created not in narrow.output  # cut to fit 80 columns
    assert created in wide.output


def test_submit_wait_says_no_worker_took_the_job_and_gives_up_at_its_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "QUEUED_NOTICE_MS", 0)
    db = f"sqlite:///{tmp_path / 'idle.db'}"

    result = CliRunner().invoke(
        cli, ["submit", "demo.noop", "--wait", "--timeout", "0.3", "--db", db]
    )

    assert result.exit_code == 1
    assert "is still queued after 0 s: no worker has taken it" in result.output
    assert "did not end within 0.3 s" in str(result.exception)
