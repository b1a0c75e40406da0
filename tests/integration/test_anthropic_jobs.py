"""`llm.respond` jobs with an Anthropic provider, end to end on each backend: a worker,
the store, the real `anthropic` SDK over loopback HTTP against the mock; usage, cache
and cost recorded, streamed text growing as partial output, a 429 waited out.

Real sockets need the system clock. Each test uses its own prompts.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal

import pytest

from backroom import App, Job, JobState, WorkerConfig, run_until_idle
from backroom.core.job import JSON
from backroom.core.usage import UsageTotals, pico_usd
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.model_limits import ModelLimits
from backroom.llm.pricing import Prices, Usage, cost_usd
from backroom.llm.task import RESPOND_TASK, register_llm_tasks
from backroom.llm.tokens import estimate_tokens

PRICES = Prices(Decimal("3"), Decimal("0.30"), Decimal("15"), Decimal("3.75"))
MODEL = "claude-sonnet-4-5"
STREAM_WORDS = 60
STREAM_DELTA_MS = 20
POLL_MS = 10
DEADLINE_MS = 30_000


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    config = MockConfig(requests_per_minute=100_000, stream_interval_ms=STREAM_DELTA_MS)
    with running_mock(config) as url:
        yield url.removesuffix("/v1")


@pytest.fixture
async def app(base_url: str, database_url: str) -> AsyncIterator[App]:
    model = ModelConfig(MODEL, ModelLimits(max_concurrency=4), PRICES)
    claude = ProviderConfig(
        "claude", base_url, models=(model,), kind="anthropic", prompt_cache=True
    )
    app = App(database_url)
    respond = register_llm_tasks(app, LLMConfig((claude,)), call_timeout_s=10)
    async with app:
        yield app
    await respond.aclose()


async def run_job(app: App, payload: JSON) -> Job:
    submitted = await app.submit(RESPOND_TASK, payload, tenant="acme")
    await run_until_idle(app, WorkerConfig(poll_interval_ms=POLL_MS))
    return await app.get(submitted.job.id)


async def test_a_job_records_cache_writes_then_reads_at_their_prices(app: App) -> None:
    prompt = f"What is a lane, Claude? ({secrets.token_hex(4)})"
    first = await run_job(app, {"model": MODEL, "input": prompt})
    second = await run_job(app, {"model": MODEL, "input": prompt})

    assert first.state is JobState.SUCCEEDED and second.state is JobState.SUCCEEDED
    tokens = estimate_tokens(prompt)
    output = estimate_tokens(first.result["output_text"])
    written = cost_usd(Usage(tokens, 0, output, cache_write_tokens=tokens), PRICES)
    read = cost_usd(Usage(tokens, tokens, output), PRICES)
    assert first.result["usage"] == {
        "input_tokens": tokens,
        "cached_tokens": 0,
        "cache_write_tokens": tokens,
        "output_tokens": output,
        "reasoning_tokens": 0,
        "cost_usd": f"{written:f}",
        "estimated": False,
    }
    assert second.result["usage"]["cached_tokens"] == tokens
    assert "cache_write_tokens" not in second.result["usage"]
    assert await app.store.usage_totals(first.id) == UsageTotals(
        1, tokens, 0, output, pico_usd(written), cache_write_tokens=tokens
    )
    assert await app.store.usage_totals(second.id) == UsageTotals(
        1, tokens, tokens, output, pico_usd(read)
    )
    assert first.result["response_id"].startswith("msg_mock")


async def test_a_streamed_job_shows_its_text_growing(app: App) -> None:
    words = " ".join(f"word{number}" for number in range(STREAM_WORDS))
    payload = {"model": MODEL, "input": f"{words} {secrets.token_hex(4)}", "stream": True}
    submitted = await app.submit(RESPOND_TASK, payload, tenant="acme")
    worker = app.worker(WorkerConfig(poll_interval_ms=POLL_MS, burst=True))
    running = asyncio.create_task(worker.run())
    seen: list[str] = []
    deadline = app.clock.now() + DEADLINE_MS
    job = await app.get(submitted.job.id)
    while not job.state.terminal and app.clock.now() < deadline:
        text = (job.partial or {}).get("text") if job.state is JobState.RUNNING else None
        if text and text not in seen:
            seen.append(text)
        await app.clock.sleep(POLL_MS)
        job = await app.get(submitted.job.id)
    await running

    final = job.result["output_text"]
    assert job.state is JobState.SUCCEEDED
    assert len(seen) >= 2 and all(final.startswith(text) for text in seen)
    assert (job.progress, job.partial) == (1.0, {"attempt": 1, "text": final})


async def test_a_refused_request_fails_the_job_with_anthropics_words(app: App) -> None:
    job = await run_job(app, {"model": MODEL, "input": "Bad request [fault:400]"})
    assert job.state is JobState.FAILED
    assert job.error is not None and "invalid_request_error" in job.error.message
    assert job.attempt == 1


async def test_an_overloaded_provider_is_retried_until_it_answers(app: App) -> None:
    prompt = f"Busy at first [fault:529:first=1:retry-after=0] ({secrets.token_hex(4)})"
    job = await run_job(app, {"model": MODEL, "input": prompt})
    assert job.state is JobState.SUCCEEDED and job.attempt == 2
