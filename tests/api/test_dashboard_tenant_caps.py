"""A tenant's caps and budgets changed in the dashboard and over `PATCH /v1/tenants/{name}`:
the operation of `backroom tenants update`, for an admin only, never a read-only key."""

from __future__ import annotations

import re

import httpx
from api_support import ADMIN_KEY, Keys, assert_problem, bearer

from backroom import App
from backroom.core.usage import DailyBudget
from backroom.service.api_keys import add_key

ADMIN = bearer(ADMIN_KEY)


def _token(page: httpx.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None, page.text
    return found.group(1)


async def _log_in(http: httpx.AsyncClient, key: str) -> str:
    """Log in with `key`; a form token of the session."""
    form = await http.get("/dashboard/login")
    await http.post("/dashboard/login", data={"csrf": _token(form), "api_key": key})
    return _token(await http.get("/dashboard/overview"))


async def test_the_admin_changes_a_tenants_caps_in_the_dashboard(
    app: App, http: httpx.AsyncClient, keys: Keys
) -> None:
    token = await _log_in(http, keys.root)
    form = {"csrf": token, "max_queued": "7", "daily_budget_usd": "2.50", "max_job_cost_usd": ""}

    saved = await http.post("/dashboard/tenants/acme/caps", data=form)
    bad = await http.post("/dashboard/tenants/acme/caps", data={**form, "max_queued": "lots"})
    page = await http.get("/dashboard/tenants")

    assert saved.status_code == 303 and "saved" in saved.headers["location"]
    assert "whole+number" in bad.headers["location"]
    tenant = await app.store.get_tenant("acme")
    assert tenant is not None
    assert (tenant.max_queued, tenant.daily_budget) == (7, DailyBudget(2_500_000_000_000))
    assert tenant.max_job_cost_pico_usd is None
    assert 'name="max_queued" min="1" step="1" placeholder="none" value="7"' in page.text


async def test_a_read_only_admin_key_and_a_tenant_are_refused(
    app: App, http: httpx.AsyncClient, keys: Keys
) -> None:
    read_only = await add_key(app, "root", read_only=True)
    token = await _log_in(http, read_only)
    refused = await http.post(
        "/dashboard/tenants/acme/caps", data={"csrf": token, "max_queued": "1"}
    )
    await http.post("/dashboard/logout", data={"csrf": token})
    tenant_token = await _log_in(http, keys.acme)
    hidden = await http.post(
        "/dashboard/tenants/acme/caps", data={"csrf": tenant_token, "max_queued": "1"}
    )

    assert refused.status_code == 403 and "read-only" in refused.text
    assert hidden.status_code == 404
    tenant = await app.store.get_tenant("acme")
    assert tenant is not None and tenant.max_queued is None


async def test_patch_changes_only_the_fields_given(http: httpx.AsyncClient, keys: Keys) -> None:
    first = await http.patch(
        "/v1/tenants/capped",
        json={"daily_budget_usd": "25", "max_job_cost_usd": 0.5},
        headers=ADMIN,
    )
    second = await http.patch("/v1/tenants/capped", json={"daily_budget_usd": None}, headers=ADMIN)

    assert first.status_code == 200, first.text
    assert first.json()["max_queued"] == 2  # left out: kept
    assert (first.json()["daily_budget_usd"], first.json()["max_job_cost_usd"]) == ("25", "0.5")
    assert (second.json()["daily_budget_usd"], second.json()["max_job_cost_usd"]) == (None, "0.5")


async def test_patch_refusals_are_problems(app: App, http: httpx.AsyncClient, keys: Keys) -> None:
    read_only = bearer(await add_key(app, "root", read_only=True))
    assert_problem(
        await http.patch("/v1/tenants/acme", json={"max_queued": 9}, headers=read_only),
        403,
        "read-only-key",
    )
    assert_problem(
        await http.patch("/v1/tenants/nobody", json={"max_queued": 3}, headers=ADMIN), 404
    )
    assert_problem(
        await http.patch("/v1/tenants/acme", json={}, headers=ADMIN), 422, "validation-error"
    )
    assert_problem(
        await http.patch("/v1/tenants/acme", json={"max_queued": 0}, headers=ADMIN),
        422,
        "validation-error",
    )
    assert_problem(
        await http.patch("/v1/tenants/acme", json={"max_queued": True}, headers=ADMIN),
        422,
        "validation-error",
    )
    assert_problem(
        await http.patch("/v1/tenants/acme", json={"daily_budget_usd": "NaN"}, headers=ADMIN),
        422,
        "validation-error",
    )
    tenant = bearer(keys.acme)
    assert_problem(
        await http.patch("/v1/tenants/acme", json={"max_queued": 9}, headers=tenant), 403
    )
    assert_problem(await http.patch("/v1/tenants/acme", json={"max_queued": 9}), 401)
