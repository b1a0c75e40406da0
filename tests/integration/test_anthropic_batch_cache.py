"""Prompt-cache writes and reads of Anthropic batch lines: stored in the usage rows apart
(`cache_write_tokens`, `cached_tokens`) and priced at half the cache-write and
cache-read prices, through the real `anthropic` SDK against the mock."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from batch_offload_support import QUICK_BATCHES, QUICK_RETRY, all_finished, running_worker

from backroom import App
from backroom.core.job import Job, JobState
from backroom.core.usage import pico_usd
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.mock.batch_jobs import BatchMockConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.pricing import Prices, Usage, cost_usd
from backroom.llm.task import RESPOND_TASK, register_llm_tasks
from backroom.llm.tokens import estimate_tokens

PRICES = Prices(Decimal("3"), Decimal("0.30"), Decimal("15"), Decimal("3.75"))
BATCH_PRICES = PRICES.for_batch()


@pytest.fixture
def base_url() -> Iterator[str]:
    with running_mock(MockConfig(batches=BatchMockConfig(delay_ms=200))) as url:
        yield url


def _config(base_url: str) -> LLMConfig:
    model = ModelConfig("claude-cached", prices=PRICES)
    claude = ProviderConfig(
        "claude", base_url, models=(model,), kind="anthropic", prompt_cache=True
    )
    return LLMConfig((claude,), batch=dict(QUICK_BATCHES))


async def _one_batch_job(app: App, prompt: str, count: int) -> Job:
    payload = {"model": "claude-cached", "input": prompt, "max_output_tokens": 32}
    await app.submit(RESPOND_TASK, payload, tenant="acme", queue="batch")
    async with running_worker(app):
        jobs = await all_finished(app, count, seconds=60)
    return jobs[-1]


async def test_cache_writes_then_reads_are_stored_and_priced_in_a_batch(
    base_url: str, tmp_path: Path
) -> None:
    prompt = f"Cache this prompt in a batch ({secrets.token_hex(4)})"
    app = App(f"sqlite:///{tmp_path / 'cache.db'}")
    respond = register_llm_tasks(app, _config(base_url), retry=QUICK_RETRY)
    async with app:
        written = await _one_batch_job(app, prompt, 1)
        read = await _one_batch_job(app, prompt, 2)
        first = await app.store.usage_totals(written.id)
        second = await app.store.usage_totals(read.id)
    await respond.aclose()

    assert (written.state, read.state) == (JobState.SUCCEEDED, JobState.SUCCEEDED)
    tokens = estimate_tokens(prompt)
    output = first.output_tokens
    assert (first.input_tokens, first.cache_write_tokens, first.cached_tokens) == (
        tokens,
        tokens,
        0,
    )
    assert (second.cache_write_tokens, second.cached_tokens) == (0, tokens)
    writes = cost_usd(Usage(tokens, 0, output, cache_write_tokens=tokens), BATCH_PRICES)
    reads = cost_usd(Usage(tokens, tokens, second.output_tokens), BATCH_PRICES)
    assert first.cost_pico_usd == pico_usd(writes)  # at the batch prices: sent in a batch
    assert second.cost_pico_usd == pico_usd(reads)
    assert written.result is not None and written.result["usage"]["cache_write_tokens"] == tokens
