"""The telemetry of `llm.respond` jobs against the mock over real HTTP: tokens and cost
by tenant and model, a 429 counted against its lane and logged as the lane's pause."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from backroom import App, JobState, WorkerConfig, run_until_idle
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.model_limits import ModelLimits
from backroom.llm.pricing import Prices
from backroom.llm.task import RESPOND_TASK, register_llm_tasks
from backroom.telemetry import Telemetry

PRICES = Prices(Decimal("0.15"), Decimal("0.075"), Decimal("0.60"))


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig(requests_per_minute=100_000)) as url:
        yield url


@pytest.fixture
async def app(base_url: str, tmp_path: Path) -> AsyncIterator[App]:
    model = ModelConfig("priced", ModelLimits(max_concurrency=4), PRICES)
    config = LLMConfig((ProviderConfig("mock", base_url, models=(model,)),))
    app = App(f"sqlite:///{tmp_path / 'llm.db'}")
    app.telemetry = Telemetry(process="llm-worker:1")
    respond = register_llm_tasks(app, config, call_timeout_s=10)
    async with app:
        yield app
    await respond.aclose()


def _values(app: App) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    text = app.telemetry.metrics.exposition().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def test_tokens_cost_and_a_429_are_counted_and_the_pause_logged(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    asked = {"model": "priced", "input": "Count me."}
    answered = await app.submit(RESPOND_TASK, asked, tenant="acme")
    limited = {"model": "priced", "input": "Wait. [fault:429:first=1:retry-after-ms=20]"}
    refused = await app.submit(RESPOND_TASK, limited, tenant="globex")
    with caplog.at_level(logging.INFO, logger="backroom"):
        await run_until_idle(app, WorkerConfig(poll_interval_ms=10))

    usage = await app.store.usage_totals(answered.job.id)
    values = _values(app)
    labels = {("process", "llm-worker:1"), ("tenant", "acme"), ("model", "priced")}
    assert (await app.get(refused.job.id)).state is JobState.SUCCEEDED
    assert values["backroom_llm_tokens_total", frozenset({*labels, ("kind", "input")})] == (
        usage.input_tokens
    )
    assert values["backroom_llm_tokens_total", frozenset({*labels, ("kind", "output")})] == (
        usage.output_tokens
    )
    cost = values["backroom_llm_cost_usd_total", frozenset(labels)]
    assert cost == pytest.approx(usage.cost_pico_usd / 10**12)
    lane = frozenset({("process", "llm-worker:1"), ("lane", "mock/priced")})
    assert values["backroom_lane_rate_limited_total", lane] == 1
    pauses = [r for r in caplog.records if vars(r).get("fields", {}).get("event") == "lane.paused"]
    assert [vars(record)["fields"]["by"] for record in pauses] == ["provider"]
    assert pauses[0].getMessage().startswith("lane mock/priced paused by provider for ")
