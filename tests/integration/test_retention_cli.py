"""The database commands: `backroom migrate` and `backroom prune`, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backroom.cli.admin import duration_ms
from backroom.cli.main import cli
from backroom.clock import SystemClock
from backroom.core.job import ErrorInfo, JobState, NewJob
from backroom.core.outcome import Failed, Outcome, Succeeded
from backroom.runtime.retention import DAY_MS
from backroom.store import open_store
from backroom.store.migrations import load_migrations
from backroom.store.protocol import JobFilter

LATEST = load_migrations("sqlite")[-1].version


@pytest.fixture
def db(database_url: str) -> str:
    """A database URL for one test: a SQLite file, then a PostgreSQL schema (conftest)."""
    return database_url


def run(*args: str) -> str:
    """Run the CLI; its output (the command must succeed)."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def finish_jobs(db: str, ended: list[tuple[int, Outcome]]) -> None:
    """Store one job per (days ago, outcome), each finished that many days ago."""
    now = SystemClock().now()

    async def store_them() -> None:
        store = open_store(db)
        try:
            await store.migrate()
            for days_ago, outcome in ended:
                at = now - days_ago * DAY_MS
                await store.submit(NewJob("noop", None, at), at)
                (job,) = await store.claim([], 1, "worker", 60_000, at)
                await store.finish([(job.lease, outcome)], at)
        finally:
            await store.close()

    asyncio.run(store_them())


def states_left(db: str) -> list[JobState]:
    async def read() -> list[JobState]:
        store = open_store(db)
        try:
            return sorted(job.state for job in await store.list_jobs(JobFilter()))
        finally:
            await store.close()

    return asyncio.run(read())


def test_migrate_creates_the_schema_and_prints_its_version(db: str) -> None:
    assert run("migrate", "--db", db) == f"schema version {LATEST}\n"
    assert run("migrate", "--db", db) == f"schema version {LATEST}\n"


def test_prune_deletes_the_named_states_older_than_the_given_age(db: str) -> None:
    boom = Failed(ErrorInfo("RuntimeError", "boom"))
    finish_jobs(db, [(10, Succeeded(1)), (10, boom), (3, Succeeded(2))])

    only_successes = run("prune", "--older-than", "7d", "--states", "succeeded", "--db", db)
    everything_old = run("prune", "--older-than", "7d", "--db", db)

    assert only_successes.startswith("deleted 1 job(s) (succeeded) that finished before ")
    assert everything_old.startswith("deleted 1 job(s) (succeeded, cancelled, failed)")
    assert states_left(db) == [JobState.SUCCEEDED]


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        (["--older-than", "7 days"], "is not a duration"),
        (["--older-than", "7d", "--states", "queued"], "states must be some of"),
    ],
)
def test_prune_refuses_bad_durations_and_unfinished_states(
    options: list[str], complaint: str, tmp_path: Path
) -> None:
    result = CliRunner().invoke(cli, ["prune", *options, "--db", f"sqlite:///{tmp_path / 'x.db'}"])

    assert result.exit_code == 2
    assert complaint in result.output


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("90s", 90_000),
        ("30m", 1_800_000),
        ("12h", 43_200_000),
        ("7d", 7 * DAY_MS),
        ("2w", 14 * DAY_MS),
    ],
)
def test_durations_take_seconds_minutes_hours_days_and_weeks(text: str, ms: int) -> None:
    assert duration_ms(text) == ms
