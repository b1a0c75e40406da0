"""JSON that no store keeps and no client reads back (issue 9, item 3): a lone
surrogate in a metadata key once answered 500 yet stored the job, and every read of
it failed from then on. Refused where it enters (HTTP, library, CLI, a handler's
result). Reading such a row, on both stores: tests/integration/test_poisoned_rows.py."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import httpx
import pytest
from api_support import Keys, assert_problem, bearer
from typer.testing import CliRunner

from backroom import App, InvalidJson, JobContext, JobState, run_until_idle
from backroom.cli.main import cli, main

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


async def test_a_handler_result_that_is_not_plain_json_fails_the_job(app: App) -> None:
    @app.task("nan")
    async def nan(_ctx: JobContext, _payload: object) -> object:
        return {"score": math.nan, "\ud800": 1}

    submitted = await app.submit("nan", None, max_attempts=1)
    await run_until_idle(app)

    job = await app.get(submitted.job.id)
    assert job.state is JobState.FAILED
    assert job.error is not None and "not plain JSON" in job.error.message
