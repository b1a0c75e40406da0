"""Tenant isolation on every endpoint, and what an admin key may do."""

from __future__ import annotations

import httpx
import pytest
from api_support import ADMIN_KEY, Keys, assert_problem, bearer, submit

from backroom import App, run_until_idle


@pytest.fixture
async def acme_jobs(http: httpx.AsyncClient, keys: Keys, app: App) -> dict[str, int]:
    """Acme's jobs: one failed, one queued (globex has none)."""
    failed = (await submit(http, keys.acme, task="boom")).json()["id"]
    await run_until_idle(app)
    queued = (await submit(http, keys.acme, delay_s=600)).json()["id"]
    return {"failed": failed, "queued": queued}


async def test_idempotency_keys_are_scoped_to_the_tenant(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    acme = await submit(http, keys.acme, payload=1, idempotency_key="same")
    globex = await submit(http, keys.globex, payload=2, idempotency_key="same")

    assert (acme.status_code, globex.status_code) == (202, 202)
    assert acme.json()["id"] != globex.json()["id"]


async def test_another_tenants_job_is_not_found_anywhere(
    http: httpx.AsyncClient, keys: Keys, acme_jobs: dict[str, int]
) -> None:
    other = bearer(keys.globex)
    queued, failed = acme_jobs["queued"], acme_jobs["failed"]

    assert_problem(await http.get(f"/v1/jobs/{queued}", headers=other), 404)
    assert_problem(await http.post(f"/v1/jobs/{queued}/cancel", headers=other), 404)
    assert_problem(await http.post(f"/v1/dead-letters/{failed}/redrive", headers=other), 404)
    assert (await http.get("/v1/jobs", headers=other)).json()["jobs"] == []
    assert (await http.get("/v1/dead-letters", headers=other)).json()["jobs"] == []
    bulk = await http.post("/v1/dead-letters/redrive", json={"all": True}, headers=other)
    assert bulk.json() == {"redriven": 0, "job_ids": []}
    mine = await http.get(f"/v1/jobs/{failed}", headers=bearer(keys.acme))
    assert mine.json()["status"] == "failed"


@pytest.mark.parametrize("admin", ["environment", "tenant"])
async def test_an_admin_sees_and_acts_on_every_tenants_jobs(
    http: httpx.AsyncClient, keys: Keys, acme_jobs: dict[str, int], admin: str
) -> None:
    root = bearer(ADMIN_KEY if admin == "environment" else keys.root)
    queued, failed = acme_jobs["queued"], acme_jobs["failed"]

    listed = (await http.get("/v1/jobs", headers=root)).json()["jobs"]
    letters = (await http.get("/v1/dead-letters", headers=root)).json()["jobs"]
    seen = await http.get(f"/v1/jobs/{queued}", headers=root)
    cancelled = await http.post(f"/v1/jobs/{queued}/cancel", headers=root)
    redriven = await http.post(f"/v1/dead-letters/{failed}/redrive", headers=root)

    assert [job["id"] for job in listed] == [queued, failed]
    assert [job["id"] for job in letters] == [failed]
    assert seen.json()["tenant"] == "acme"
    assert cancelled.json()["status"] == "cancelled"
    assert redriven.json()["status"] == "queued"


async def test_jobs_the_environment_admin_submits_belong_to_the_admin_tenant(
    http: httpx.AsyncClient,
) -> None:
    created = await submit(http, ADMIN_KEY)

    assert created.json()["tenant"] == "@admin"
