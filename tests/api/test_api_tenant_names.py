"""Tenant names (issue 9, item 2): one pattern, reserved names refused, and the admin
key's jobs in a namespace that no tenant name can reach."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest
from api_support import ADMIN_KEY, bearer, submit

from backroom import App, InvalidTenantName
from backroom.cli.main import main
from backroom.service.api_keys import hash_api_key, issue_key
from backroom.store.protocol import Tenant

BAD_NAMES = ["", "admin", "system", "bad name!", "Acme", "-acme", "@admin", "a" * 64, "é"]


@pytest.mark.parametrize("name", BAD_NAMES)
async def test_a_tenant_name_outside_the_pattern_or_reserved_is_refused(
    app: App, name: str
) -> None:
    with pytest.raises(InvalidTenantName):
        await issue_key(app, name)

    assert [tenant.name for tenant in await app.store.list_tenants()] == []


@pytest.mark.parametrize("name", ["acme", "a", "team-7_eu", "0" * 63])
async def test_a_name_in_the_pattern_is_taken(app: App, name: str) -> None:
    tenant, _ = await issue_key(app, name)

    assert tenant.name == name


@pytest.mark.parametrize("name", ["admin", "bad name!"])
def test_the_cli_refuses_the_name_in_one_line(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setattr(sys, "argv", ["backroom", "tenants", "create", name, "--db", db])

    with pytest.raises(SystemExit) as exited:
        main()

    assert exited.value.code == 1
    error = capsys.readouterr().err
    assert error.startswith(f"backroom: error: tenant name {name!r}")
    assert error.count("\n") == 1


async def test_a_tenant_called_admin_does_not_see_the_admin_keys_jobs(
    http: httpx.AsyncClient, app: App
) -> None:
    # Made by an older version, which took any name: the store still holds it.
    key = "br_a-key-of-a-tenant-named-admin"
    await app.store.create_tenant(Tenant("admin", app.clock.now()), hash_api_key(key))
    job_id = (await submit(http, ADMIN_KEY)).json()["id"]

    seen = await http.get(f"/v1/jobs/{job_id}", headers=bearer(key))
    listed = await http.get("/v1/jobs", headers=bearer(key))
    cancelled = await http.post(f"/v1/jobs/{job_id}/cancel", headers=bearer(key))

    assert seen.status_code == 404
    assert listed.json()["jobs"] == []
    assert cancelled.status_code == 404
    admin_view = await http.get(f"/v1/jobs/{job_id}", headers=bearer(ADMIN_KEY))
    assert admin_view.json()["tenant"] == "@admin"
