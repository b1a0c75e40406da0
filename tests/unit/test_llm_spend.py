"""What `llm.respond` calls cost, recorded and capped: against the mock, through the SDK.

A real app (in-memory SQLite, system clock) runs each job; calls go over loopback HTTP.
Each test uses its own prompt, so the module's one mock never mixes their fault counts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from decimal import Decimal

import pytest

from backroom import App, Job, JobState, RetryPolicy, WorkerConfig, run_until_idle
from backroom.core.job import JSON
from backroom.core.spend import CallIntent
from backroom.core.usage import pico_usd, usd
from backroom.llm.call_cost import price_pico_usd, worst_case_usage
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.pricing import Prices
from backroom.llm.task import register_llm_tasks
from backroom.llm.task_input import RespondInput
from backroom.service.api_keys import issue_key
from backroom.store.sqlite.store import SqliteStore

PRICES = Prices(Decimal("2.50"), Decimal("1.25"), Decimal("10"))
POLL_MS = 10


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig()) as url:
        yield url


@pytest.fixture
async def app(base_url: str) -> AsyncIterator[App]:
    priced = ModelConfig("priced", prices=PRICES)
    config = LLMConfig(
        providers=(
            ProviderConfig("mock", base_url, models=(priced,)),
            ProviderConfig("mock-chat", base_url, chat_only=True, models=(priced,)),
        ),
        default_provider="mock",
    )
    app = App(store=SqliteStore.from_url("sqlite://:memory:"), retry=RetryPolicy(base_ms=10))
    respond_task = register_llm_tasks(app, config, call_timeout_s=10)
    async with app:
        yield app
    await respond_task.aclose()


async def run_job(app: App, payload: JSON, tenant: str = "acme") -> Job:
    submitted = await app.submit("llm.respond", payload, tenant=tenant)
    await run_until_idle(app, WorkerConfig(poll_interval_ms=POLL_MS))
    return await app.get(submitted.job.id)


def reservation(payload: JSON) -> int:
    """The worst-case cost a job with `payload` reserves for one call."""
    cost = price_pico_usd(worst_case_usage(RespondInput.parse(payload).request()), PRICES)
    assert cost is not None
    return cost


@pytest.mark.parametrize("provider", ["mock", "mock-chat"])
@pytest.mark.parametrize("stream", [False, True])
async def test_an_answer_without_usage_is_estimated_and_flagged(
    app: App, provider: str, stream: bool
) -> None:
    prompt = f"[fault:no_usage] how much? ({provider}, {stream})"
    payload = {"model": "priced", "input": prompt, "provider": provider, "stream": stream}

    job = await run_job(app, payload)

    assert job.state is JobState.SUCCEEDED
    usage = job.result["usage"]
    assert usage["estimated"] is True
    # An upper estimate (a token per byte), never a silent 0.
    assert usage["input_tokens"] >= len(prompt)
    assert usage["output_tokens"] == len(job.result["output_text"])
    assert Decimal(usage["cost_usd"]) > 0
    totals = await app.store.usage_totals(job.id)
    assert (totals.calls, totals.estimated_calls) == (1, 1)
    assert usd(totals.cost_pico_usd) == Decimal(usage["cost_usd"])


async def test_a_job_stops_before_a_call_that_could_pass_its_max_cost(app: App) -> None:
    # The first attempt's stream breaks after a delta: the call may have been billed,
    # so it is charged at its reservation; a second call would pass the cap.
    payload: dict[str, JSON] = {
        "model": "priced",
        "input": "[fault:stream_error:first=1] capped",
        "stream": True,
        "max_output_tokens": 100,
    }
    reserved = reservation(payload)
    payload["max_cost_usd"] = f"{usd(reserved * 3 // 2):f}"

    job = await run_job(app, payload)

    assert job.state is JobState.FAILED
    assert job.error is not None
    assert job.error.kind == "cost-cap-reached"
    assert f"has spent ${usd(reserved):f} of its max_cost_usd" in job.error.message
    totals = await app.store.usage_totals(job.id)
    assert (totals.calls, totals.estimated_calls, totals.cost_pico_usd) == (1, 1, reserved)


async def test_a_tenants_default_cap_applies_to_jobs_without_their_own(app: App) -> None:
    payload: JSON = {"model": "priced", "input": "a tenant cap", "max_output_tokens": 100}
    await issue_key(app, "careful", max_job_cost_pico_usd=reservation(payload) - 1)

    refused = await run_job(app, payload, tenant="careful")
    allowed = await run_job(app, {**payload, "max_cost_usd": "1"}, tenant="careful")

    assert refused.error is not None
    assert refused.error.kind == "cost-cap-reached"
    assert "has spent $0 of its max_cost_usd" in refused.error.message
    assert (await app.store.usage_totals(refused.id)).calls == 0
    assert allowed.state is JobState.SUCCEEDED


async def test_a_call_a_dead_worker_left_open_is_charged_at_its_reservation(app: App) -> None:
    payload: JSON = {"model": "priced", "input": "cut off", "max_output_tokens": 50}
    submitted = await app.submit("llm.respond", payload, tenant="acme")
    # A worker claims the job, records its call as sent, and dies: its lease runs out.
    now = app.clock.now()
    (claimed,) = await app.store.claim([], 1, "dead-worker", 1, now)
    lease = claimed.lease
    intent = CallIntent(claimed.id, lease.token, 1, "acme", "mock", "priced", 12_345, now)
    await app.store.call_open(lease, intent, None)
    assert await app.store.expire_leases(now + 2)

    await run_until_idle(app, WorkerConfig(poll_interval_ms=POLL_MS))

    job = await app.get(submitted.job.id)
    assert job.state is JobState.SUCCEEDED
    assert await app.store.open_calls(job.id) == []
    totals = await app.store.usage_totals(job.id)
    answered = pico_usd(Decimal(job.result["usage"]["cost_usd"]))
    assert (totals.calls, totals.estimated_calls) == (2, 1)
    assert totals.cost_pico_usd == 12_345 + answered
