"""A job that an older version stored with what is refused today (issue 9, item 3): a
lone surrogate in a metadata key or value, NaN. Every read of it once answered 500,
and so did every listing page that included it (the admin's too) and `backroom
status`. On both stores, it is read, listed and shown, as valid UTF-8 JSON."""

from __future__ import annotations

import asyncio
import json
import math

import httpx
import pytest
from typer.testing import CliRunner

from backroom import App
from backroom.api import ApiSettings, create_api
from backroom.cli.main import cli
from backroom.core.job import NewJob
from backroom.service.api_keys import issue_key

ADMIN_KEY = "br_admin-key-of-the-poisoned-rows-test"
POISONS = [{"\ud800": 1}, {"ok": "\udfff"}, {"x": math.nan}]


async def _store_as_an_older_version_did(app: App, metadata: dict[str, object]) -> int:
    """Write a job past today's checks, straight to the store, as an older version did."""
    job = NewJob(task="echo", input=1, run_at=app.clock.now(), tenant="acme", metadata=metadata)
    (result,) = await app.store.submit_many([job], app.clock.now())
    return result.job.id


@pytest.mark.parametrize("metadata", POISONS, ids=["surrogate-key", "surrogate-value", "nan"])
async def test_a_poisoned_row_is_read_and_listed(
    database_url: str, metadata: dict[str, object]
) -> None:
    async with App(database_url) as app:
        _, key = await issue_key(app, "acme")
        poisoned = await _store_as_an_older_version_did(app, metadata)
        api = create_api(app, ApiSettings(admin_key=ADMIN_KEY))
        transport = httpx.ASGITransport(api)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            tenant = {"Authorization": f"Bearer {key}"}
            one = await http.get(f"/v1/jobs/{poisoned}", headers=tenant)
            page = await http.get("/v1/jobs", headers=tenant)
            everyone = await http.get("/v1/jobs", headers={"Authorization": f"Bearer {ADMIN_KEY}"})

    for response in (one, page, everyone):
        assert response.status_code == 200, response.text
        json.loads(response.content.decode("utf-8"))  # valid UTF-8 JSON text
    assert one.json()["id"] == poisoned
    assert [job["id"] for job in page.json()["jobs"]] == [poisoned]


def test_backroom_status_shows_a_poisoned_row(database_url: str) -> None:
    async def store() -> int:
        async with App(database_url) as app:
            return await _store_as_an_older_version_did(app, {"\ud800": 1})

    poisoned = asyncio.run(store())
    status = CliRunner().invoke(cli, ["status", str(poisoned), "--db", database_url])

    assert status.exit_code == 0, status.output
    assert "\\ud800" in status.output
