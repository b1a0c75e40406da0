"""JSON that no store keeps and no client reads back (issue 9, item 3): a lone
surrogate in a metadata key once answered 500 yet stored the job, and every read of
it failed from then on. Refused where it enters (HTTP, library, CLI); a row that an
older version stored is still read, listed and shown without a 500."""

from __future__ import annotations

import asyncio
import json
import math
import sys
from pathlib import Path

import httpx
import pytest
from api_support import ADMIN_KEY, Keys, assert_problem, bearer
from typer.testing import CliRunner

from backroom import App, InvalidJson, JobContext, JobState, run_until_idle
from backroom.cli.main import cli, main
from backroom.core.job import NewJob

POISON_KEY = b'{"task": "echo", "input": 1, "metadata": {"\\ud800": 1}}'


@pytest.mark.parametrize(
    "raw",
    [
        POISON_KEY,
        b'{"task": "echo", "input": 1, "metadata": {"a": {"\\udfff": 1}}}',
        b'{"task": "echo", "input": {"\\ud800x": 1}}',
        b'{"task": "echo", "input": 1, "metadata": {"a": NaN}}',
    ],
)
async def test_a_lone_surrogate_or_nan_anywhere_is_a_422_and_stores_nothing(
    http: httpx.AsyncClient, keys: Keys, app: App, raw: bytes
) -> None:
    headers = bearer(keys.acme, **{"Content-Type": "application/json"})

    response = await http.post("/v1/jobs", content=raw, headers=headers)

    assert_problem(response, 422, "validation-error")
    assert await app.list_jobs() == []


@pytest.mark.parametrize(
    ("input", "metadata"),
    [(1, {"\ud800": 1}), ({"\udfff": 1}, {}), (1, {"a": math.nan}), ([math.inf], {})],
)
async def test_the_library_refuses_what_no_store_keeps(
    app: App, input: object, metadata: dict[str, object]
) -> None:
    with pytest.raises(InvalidJson):
        await app.submit("echo", input, metadata=metadata)

    assert await app.list_jobs() == []


def test_the_cli_refuses_a_lone_surrogate_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    command = ["backroom", "submit", "demo.noop", '{"\\ud800": 1}', "--db", db]
    monkeypatch.setattr(sys, "argv", command)

    with pytest.raises(SystemExit) as exited:
        main()

    assert exited.value.code == 1
    error = capsys.readouterr().err
    assert error.startswith("backroom: error: ") and "lone surrogate" in error
    assert error.count("\n") == 1
    status = CliRunner().invoke(cli, ["jobs", "--db", db])
    assert status.exit_code == 0 and "demo.noop" not in status.output


async def _store_as_an_older_version_did(app: App, metadata: dict[str, object]) -> int:
    """Write a job past today's checks, as an older version stored it."""
    job = NewJob(task="echo", input=1, run_at=app.clock.now(), tenant="acme", metadata=metadata)
    (result,) = await app.store.submit_many([job], app.clock.now())
    return result.job.id


@pytest.mark.parametrize("metadata", [{"\ud800": 1}, {"ok": "\udfff"}, {"x": math.nan}])
async def test_a_poisoned_row_is_still_read_and_listed(
    http: httpx.AsyncClient, keys: Keys, app: App, metadata: dict[str, object]
) -> None:
    poisoned = await _store_as_an_older_version_did(app, metadata)

    one = await http.get(f"/v1/jobs/{poisoned}", headers=bearer(keys.acme))
    page = await http.get("/v1/jobs", headers=bearer(keys.acme))
    everyone = await http.get("/v1/jobs", headers=bearer(ADMIN_KEY))

    for response in (one, page, everyone):
        assert response.status_code == 200, response.text
        json.loads(response.content.decode("utf-8"))  # valid UTF-8 JSON text
    assert one.json()["id"] == poisoned
    assert [job["id"] for job in page.json()["jobs"]] == [poisoned]


def test_backroom_status_shows_a_poisoned_row(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'old.db'}"

    async def store() -> int:
        async with App(db) as app:
            return await _store_as_an_older_version_did(app, {"\ud800": 1})

    poisoned = asyncio.run(store())
    status = CliRunner().invoke(cli, ["status", str(poisoned), "--db", db])

    assert status.exit_code == 0, status.output
    assert "\\ud800" in status.output


async def test_a_handler_result_that_is_not_plain_json_fails_the_job(app: App) -> None:
    @app.task("nan")
    async def nan(_ctx: JobContext, _payload: object) -> object:
        return {"score": math.nan, "\ud800": 1}

    submitted = await app.submit("nan", None, max_attempts=1)
    await run_until_idle(app)

    job = await app.get(submitted.job.id)
    assert job.state is JobState.FAILED
    assert job.error is not None and "not plain JSON" in job.error.message
