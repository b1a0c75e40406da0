"""What the batch offload tests share: an app whose `llm.respond` offloads the `batch`
queue to the mock's batch API of either provider kind (OpenAI's Batch API, Anthropic's
Message Batches) with quick timings, a worker running beside the test, and the mock's
batches read back through that provider's official SDK."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import openai
from deadline_polls import until

from backroom import App, Job, WorkerConfig
from backroom.core.job import NewJob
from backroom.core.retry import RetryPolicy
from backroom.llm.batch.provider import BatchState
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.pricing import Prices
from backroom.llm.providers.anthropic.batch import batch_status as anthropic_status
from backroom.llm.providers.anthropic.provider import make_client as anthropic_client
from backroom.llm.providers.openai.batch import batch_status as openai_status
from backroom.llm.settings import ProviderKind
from backroom.llm.task import RESPOND_TASK, RespondTask, register_llm_tasks
from backroom.store.protocol import JobFilter

PRICES = Prices(Decimal("0.15"), Decimal("0.075"), Decimal("0.60"))
QUICK_BATCHES: dict[str, Any] = {
    "default": "batch-queue",
    "flush_after_s": Decimal("0.2"),
    "poll_first_s": Decimal("0.1"),
    "poll_max_s": Decimal("0.4"),
    "hold_s": 3,
}
QUICK_RETRY = RetryPolicy(max_attempts=4, base_ms=10, cap_ms=50)
KINDS: tuple[ProviderKind, ...] = ("openai", "anthropic")
"""The provider kinds whose batch APIs backroom offloads to (tests parametrize by them)."""


def llm_config(
    base_url: str, batch: Mapping[str, Any] | None = None, kind: ProviderKind = "openai"
) -> LLMConfig:
    """The mock as provider `mock` of `kind` with one priced model, offloading the batch
    queue."""
    model = ModelConfig("priced", prices=PRICES)
    provider = ProviderConfig("mock", base_url, models=(model,), kind=kind)
    return LLMConfig((provider,), batch=dict(QUICK_BATCHES | dict(batch or {})))


@asynccontextmanager
async def offload_app(
    database_url: str,
    base_url: str,
    batch: Mapping[str, Any] | None = None,
    kind: ProviderKind = "openai",
) -> AsyncIterator[tuple[App, RespondTask]]:
    """An opened app with `llm.respond` offloading the `batch` queue to the mock."""
    app = App(database_url)
    respond = register_llm_tasks(app, llm_config(base_url, batch, kind), retry=QUICK_RETRY)
    async with app:
        yield app, respond


@asynccontextmanager
async def running_worker(app: App, concurrency: int = 64) -> AsyncIterator[None]:
    """A worker of `app` running beside the block, stopped after it."""
    worker = app.worker(WorkerConfig(concurrency=concurrency, poll_interval_ms=20))
    task = asyncio.create_task(worker.run())
    try:
        yield
    finally:
        worker.stop()
        await task


def batch_job(app: App, prompt: str, queue: str = "batch", **extra: Any) -> NewJob:
    """An `llm.respond` job on `queue` (the `batch` queue by default)."""
    payload = {"model": "priced", "input": prompt, "max_output_tokens": 32} | extra
    return app.new_job(RESPOND_TASK, payload, tenant="acme", queue=queue, max_attempts=4)


async def all_finished(app: App, count: int, seconds: float = 120) -> list[Job]:
    """Wait until `count` jobs are all terminal; them, by id."""
    jobs: list[Job] = []

    async def finished() -> bool:
        nonlocal jobs
        jobs = await app.list_jobs(JobFilter(limit=count + 1))
        return len(jobs) == count and all(job.state.terminal for job in jobs)

    await until(finished, f"{count} jobs to finish", seconds)
    return sorted(jobs, key=lambda job: job.id)


@dataclass(frozen=True, slots=True)
class SeenBatch:
    """One of the mock's batches as its provider's SDK lists it: its requests and state."""

    total: int
    state: BatchState


async def mock_batches(base_url: str, kind: ProviderKind = "openai") -> list[SeenBatch]:
    """Every batch the mock holds of `kind`'s batch API, through that SDK's list."""
    if kind == "anthropic":
        claude = anthropic_client(ProviderConfig("mock", base_url, kind=kind), timeout_s=10)
        try:
            listed = [anthropic_status(b) async for b in claude.messages.batches.list(limit=100)]
        finally:
            await claude.close()
    else:
        client = openai.AsyncOpenAI(api_key="no-key", base_url=base_url, max_retries=0)
        try:
            listed = [openai_status(batch) async for batch in client.batches.list(limit=100)]
        finally:
            await client.close()
    return [SeenBatch(status.counts.total, status.state) for status in listed]
