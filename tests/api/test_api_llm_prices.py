"""Unpriced models under a spend cap: refused at submit (422 naming the model); the
cost of unpriced calls is null (unknown), never "0", in usage reports."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest
from api_support import Keys, assert_problem, bearer, submit

from backroom import App
from backroom.core.usage import AttemptUsage, DailyBudget, pico_usd
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.task import RESPOND_TASK, register_llm_tasks
from backroom.service.api_keys import issue_key

HOUSE = "house-model"


@pytest.fixture(autouse=True)
def respond_task(app: App) -> None:
    """`llm.respond` with a local provider whose model has no price (never called here)."""
    local = ProviderConfig(
        "local", "http://127.0.0.1:9/v1", models=(ModelConfig(HOUSE),), builtin_prices=False
    )
    openai = ProviderConfig("openai", "http://127.0.0.1:9/v1", any_model=True)
    register_llm_tasks(app, LLMConfig((local, openai), default_provider="local"))


def ask(model: str, **extra: object) -> dict[str, object]:
    return {"model": model, "input": "hi", **extra}


async def test_a_tenant_with_a_budget_cannot_submit_an_unpriced_model(
    http: httpx.AsyncClient, app: App
) -> None:
    _, key = await issue_key(app, "thrifty", daily_budget=DailyBudget.of_usd(Decimal("1")))

    refused = await submit(http, key, RESPOND_TASK, ask(HOUSE))
    priced = await submit(http, key, RESPOND_TASK, ask("gpt-4o-mini", provider="openai"))

    problem = assert_problem(refused, 422, "validation-error")
    assert f"model {HOUSE!r} has no price" in problem["detail"]
    assert priced.status_code == 202


async def test_a_tenant_cost_cap_or_a_jobs_max_cost_also_needs_a_price(
    http: httpx.AsyncClient, app: App, keys: Keys
) -> None:
    _, capped = await issue_key(app, "capped-cost", max_job_cost_pico_usd=pico_usd(Decimal("1")))

    assert_problem(await submit(http, capped, RESPOND_TASK, ask(HOUSE)), 422, "validation-error")
    own_cap = ask(HOUSE, max_cost_usd="0.5")
    assert_problem(await submit(http, keys.acme, RESPOND_TASK, own_cap), 422, "validation-error")
    # Without any cap, an unpriced model is allowed: its cost is just unknown.
    assert (await submit(http, keys.acme, RESPOND_TASK, ask(HOUSE))).status_code == 202


async def test_unpriced_calls_cost_null_not_zero(
    http: httpx.AsyncClient, app: App, keys: Keys
) -> None:
    now = app.clock.now()
    await app.store.record_usage(
        AttemptUsage(1, 1, "acme", HOUSE, None, 10, 0, 5, None, now, lease_token=1)
    )

    report = (await http.get("/v1/usage", headers=bearer(keys.acme))).json()

    (group,) = report["groups"]
    assert (group["model"], group["cost_usd"], group["unpriced_calls"]) == (HOUSE, None, 1)
    assert report["total"]["cost_usd"] is None
