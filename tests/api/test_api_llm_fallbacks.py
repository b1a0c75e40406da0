"""POST /v1/jobs with `llm.respond` fallbacks: each must be configured, and priced for a
tenant with a daily budget; the job's document names each attempt's lane."""

from __future__ import annotations

from decimal import Decimal

import httpx
from api_support import Keys, assert_problem, submit

from backroom import App
from backroom.core.usage import DailyBudget
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.pricing import Prices
from backroom.llm.task import register_llm_tasks
from backroom.service.api_keys import issue_key

PRICES = Prices(Decimal("1"), Decimal("1"), Decimal("2"))


def configured(app: App) -> None:
    """A priced and an unpriced model on one provider, a priced one on another."""
    models = (ModelConfig("priced", prices=PRICES), ModelConfig("free"))
    providers = (
        ProviderConfig("main", "http://127.0.0.1:9/v1", models=models),
        ProviderConfig("spare", "http://127.0.0.1:9/v1", models=(models[0],)),
    )
    register_llm_tasks(app, LLMConfig(providers, default_provider="main"))


def asking(fallbacks: list[dict[str, str]]) -> dict[str, object]:
    return {"model": "priced", "input": "hi", "fallbacks": fallbacks}


async def test_each_fallback_must_be_configured(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    configured(app)

    accepted = await submit(
        http, keys.acme, "llm.respond", asking([{"provider": "spare", "model": "priced"}])
    )
    typo = await submit(http, keys.acme, "llm.respond", asking([{"model": "priced-2"}]))
    nowhere = await submit(
        http, keys.acme, "llm.respond", asking([{"provider": "gone", "model": "priced"}])
    )

    assert accepted.status_code == 202
    assert accepted.json()["status"] == "queued"
    problem = assert_problem(typo, 422, "validation-error")
    assert problem["errors"][0]["loc"] == ["body", "input", "fallbacks", 0, "model"]
    assert (problem["provider"], problem["models"]) == ("main", ["priced", "free"])
    problem = assert_problem(nowhere, 422, "validation-error")
    assert problem["errors"][0]["loc"] == ["body", "input", "fallbacks", 0, "provider"]
    assert problem["providers"] == ["main", "spare"]


async def test_a_tenant_with_a_budget_may_fall_back_only_to_priced_models(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    configured(app)
    _, thrifty = await issue_key(app, "thrifty", daily_budget=DailyBudget.of_usd(Decimal("1")))

    refused = await submit(http, thrifty, "llm.respond", asking([{"model": "free"}]))
    unbudgeted = await submit(http, keys.acme, "llm.respond", asking([{"model": "free"}]))

    problem = assert_problem(refused, 422, "validation-error")
    assert "model 'free' of provider 'main' has no prices" in problem["detail"]
    assert unbudgeted.status_code == 202
