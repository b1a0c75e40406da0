"""Apps whose `llm.respond` reaches a LiteLLM proxy, and running their jobs to the end."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from litellm_process import LiteLLMProxy

from backroom import App, Job, WorkerConfig, run_until_idle
from backroom.core.job import JSON, AttemptOutcome
from backroom.llm.config import LLMConfig, ModelConfig
from backroom.llm.task import RESPOND_TASK, register_llm_tasks

POLL_MS = 10


@asynccontextmanager
async def started_app(
    proxy: LiteLLMProxy,
    folder: Path,
    *,
    chat_only: bool = False,
    models: Sequence[ModelConfig] = (),
) -> AsyncIterator[App]:
    """An app on SQLite (in `folder`) with `llm.respond` on the proxy, as the only
    provider (`litellm`), through the Responses API or chat completions (`chat_only`);
    `models` gives backroom's limits and prices for some of the proxy's models."""
    provider = proxy.provider(chat_only=chat_only, models=models)
    app = App(f"sqlite:///{folder / 'jobs.db'}")
    respond = register_llm_tasks(app, LLMConfig((provider,)), call_timeout_s=30)
    async with app:
        yield app
    await respond.aclose()


async def run_jobs(
    app: App, payloads: Sequence[JSON], *, max_attempts: int | None = None, concurrency: int = 10
) -> list[Job]:
    """Submit a `llm.respond` job per payload, run a worker until all have ended."""
    submitted = [
        (await app.submit(RESPOND_TASK, payload, max_attempts=max_attempts)).job
        for payload in payloads
    ]
    await run_until_idle(app, WorkerConfig(poll_interval_ms=POLL_MS, concurrency=concurrency))
    return [await app.get(job.id) for job in submitted]


async def outcomes(app: App, job: Job) -> list[AttemptOutcome | None]:
    """How each of the job's attempts ended (None: still running), oldest first."""
    return [attempt.outcome for attempt in await app.attempts(job.id)]
