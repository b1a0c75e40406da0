"""`llm.respond` jobs end to end on each backend: the official SDK over loopback HTTP
against the mock, the store-backed sink, usage and cost, streaming progress, budgets.

Real sockets need the system clock. Each test uses its own prompts, so the module's
one mock never mixes their prompt cache or fault counts.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal

import pytest

from backroom import App, Job, JobState, WorkerConfig, run_until_idle
from backroom.core.job import JSON
from backroom.core.usage import (
    DailyBudget,
    OverBudget,
    UsageTotals,
    day_start,
    next_day_start,
    pico_usd,
)
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.model_limits import ModelLimits
from backroom.llm.pricing import Prices
from backroom.llm.task import RESPOND_TASK, register_llm_tasks
from backroom.llm.tokens import estimate_tokens
from backroom.runtime.lane_gate import BUDGET_EXHAUSTED
from backroom.service.api_keys import issue_key
from backroom.service.callers import Caller
from backroom.service.jobs import get_job

# Dollars per million input, cached input and output tokens.
PRICES = Prices(Decimal("0.15"), Decimal("0.075"), Decimal("0.60"))
STREAM_WORDS = 60
STREAM_DELTA_MS = 20
POLL_MS = 10
DEADLINE_MS = 30_000


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    config = MockConfig(requests_per_minute=100_000, stream_interval_ms=STREAM_DELTA_MS)
    with running_mock(config) as url:
        yield url


@pytest.fixture
async def app(base_url: str, database_url: str) -> AsyncIterator[App]:
    model = ModelConfig("priced", ModelLimits(max_concurrency=4), PRICES)
    config = LLMConfig((ProviderConfig("mock", base_url, models=(model,)),))
    app = App(database_url)
    respond = register_llm_tasks(app, config, call_timeout_s=10)
    async with app:
        yield app
    await respond.aclose()


async def run_job(
    app: App, payload: JSON, *, tenant: str = "acme", config: WorkerConfig | None = None
) -> Job:
    submitted = await app.submit(RESPOND_TASK, payload, tenant=tenant)
    await run_until_idle(app, config or WorkerConfig(poll_interval_ms=POLL_MS))
    return await app.get(submitted.job.id)


def expected_cost_pico_usd(input_tokens: int, cached_tokens: int, output_tokens: int) -> int:
    """The price table applied by hand: dollars per million tokens, in pico-dollars."""
    per_token = {  # pico-dollars per token: $0.15 / 1M tokens = 150,000 pico-dollars
        "input": 150_000,
        "cached": 75_000,
        "output": 600_000,
    }
    uncached = input_tokens - cached_tokens
    return (
        uncached * per_token["input"]
        + cached_tokens * per_token["cached"]
        + output_tokens * per_token["output"]
    )


async def test_usage_and_cost_follow_the_price_table(app: App) -> None:
    # A prompt the mock has never seen (the first call is not cached), asked twice.
    prompt = f"How much does a lane cost? ({secrets.token_hex(4)})"
    first = await run_job(app, {"model": "priced", "input": prompt})
    second = await run_job(app, {"model": "priced", "input": prompt})

    input_tokens = estimate_tokens(prompt)
    output_tokens = estimate_tokens(first.result["output_text"])
    fresh = expected_cost_pico_usd(input_tokens, 0, output_tokens)
    cached = expected_cost_pico_usd(input_tokens, input_tokens, output_tokens)
    assert await app.store.usage_totals(first.id) == UsageTotals(
        1, input_tokens, 0, output_tokens, fresh
    )
    assert await app.store.usage_totals(second.id) == UsageTotals(
        1, input_tokens, input_tokens, output_tokens, cached
    )
    assert second.result["usage"]["cost_usd"] == f"{Decimal(cached) / 10**12:f}"
    now = app.clock.now()
    assert await app.store.spent_pico_usd("acme", day_start(now), next_day_start(now)) == (
        fresh + cached
    )
    # The job document shows the same totals, the cost an exact decimal string.
    reply = await get_job(app, Caller("acme"), first.id)
    assert reply.body["usage"] == {
        "calls": 1,
        "input_tokens": input_tokens,
        "cached_tokens": 0,
        "cache_write_tokens": 0,
        "output_tokens": output_tokens,
        "cost_usd": f"{(Decimal(fresh) / 10**12).normalize():f}",
        "unpriced_calls": 0,
        "estimated_calls": 0,
    }
    assert pico_usd(Decimal(reply.body["usage"]["cost_usd"])) == fresh


async def test_a_repeated_submission_makes_one_paid_call(app: App) -> None:
    payload = {"model": "priced", "input": "Only once, please."}
    first = await app.submit(RESPOND_TASK, payload, key="once", tenant="acme")
    repeat = await app.submit(RESPOND_TASK, payload, key="once", tenant="acme")
    await run_until_idle(app, WorkerConfig(poll_interval_ms=POLL_MS))

    assert (repeat.created, repeat.job.id) == (False, first.job.id)
    assert (await app.store.usage_totals(first.job.id)).calls == 1


async def test_the_lane_ends_with_no_call_in_flight(app: App) -> None:
    job = await run_job(app, {"model": "priced", "input": "Settle me.", "max_output_tokens": 50})

    (lane,) = await app.store.lanes(app.clock.now())
    assert job.state is JobState.SUCCEEDED
    assert (lane.name, lane.state.in_flight, lane.limits.max_concurrency) == ("mock/priced", 0, 4)


async def test_streamed_output_grows_while_the_job_runs(app: App) -> None:
    words = " ".join(f"word{number}" for number in range(STREAM_WORDS))
    submitted = await app.submit(
        RESPOND_TASK, {"model": "priced", "input": words, "stream": True}, tenant="acme"
    )
    worker = app.worker(WorkerConfig(poll_interval_ms=POLL_MS, burst=True))
    running = asyncio.create_task(worker.run())
    seen: list[str] = []
    deadline = app.clock.now() + DEADLINE_MS
    job = await app.get(submitted.job.id)
    while not job.state.terminal and app.clock.now() < deadline:
        partial = job.partial
        if (
            job.state is JobState.RUNNING
            and partial
            and partial["text"]
            and partial["text"] not in seen
        ):
            assert partial["attempt"] == 1
            seen.append(partial["text"])
        await app.clock.sleep(POLL_MS)
        job = await app.get(submitted.job.id)
    await running

    final = job.result["output_text"]
    assert job.state is JobState.SUCCEEDED
    # Polls saw the text grow, each time a longer start of the final answer.
    assert len(seen) >= 2
    assert all(final.startswith(text) for text in seen)
    assert [len(text) for text in seen] == sorted({len(text) for text in seen})
    # Once done, the partial output is the whole answer, not the last tick's prefix.
    assert (job.progress, job.partial) == (1.0, {"attempt": 1, "text": final})


async def test_a_spent_budget_fails_the_next_job_when_the_worker_says_so(app: App) -> None:
    spender = await run_job(app, {"model": "priced", "input": "Spend it all."}, tenant="thrifty")
    spent = await app.store.usage_totals(spender.id)
    # The budget is exactly what was spent: spent, so the next job may not start.
    await issue_key(app, "thrifty", daily_budget=DailyBudget(spent.cost_pico_usd))
    failing = WorkerConfig(poll_interval_ms=POLL_MS, over_budget=OverBudget.FAIL)
    refused = await run_job(
        app, {"model": "priced", "input": "One more?"}, tenant="thrifty", config=failing
    )

    assert refused.state is JobState.FAILED
    assert refused.error is not None
    assert refused.error.kind == BUDGET_EXHAUSTED
    assert (await app.store.usage_totals(refused.id)).calls == 0
