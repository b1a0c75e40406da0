"""`llm.respond` fallbacks behind LiteLLM's proxy: the proxy's forwarded model fails
with 5xx (a scripted fault upstream), and the job moves to the next model the proxy
serves, its attempts naming both lanes (as LiteLLM's router would, but durable)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from litellm_process import LiteLLMProxy
from proxy_models import LITELLM_MOCKED, MOCKED_TEXT, UPSTREAM

from backroom import App, JobState, RetryPolicy, WorkerConfig, run_until_idle
from backroom.core.job import AttemptOutcome
from backroom.llm.config import LLMConfig, ModelConfig
from backroom.llm.task import RESPOND_TASK, register_llm_tasks

pytestmark = pytest.mark.slow


@pytest.fixture
async def app(litellm_proxy: LiteLLMProxy, tmp_path: Path) -> AsyncIterator[App]:
    models = (ModelConfig(UPSTREAM), ModelConfig(LITELLM_MOCKED))
    proxy = litellm_proxy.provider("proxy", chat_only=True, models=models)
    app = App(f"sqlite:///{tmp_path / 'jobs.db'}")
    quick = RetryPolicy(max_attempts=4, base_ms=10, cap_ms=50)
    respond = register_llm_tasks(app, LLMConfig((proxy,), fallback_after_attempts=2), retry=quick)
    async with app:
        yield app
    await respond.aclose()


async def test_a_failing_proxy_model_moves_the_job_to_the_next(app: App) -> None:
    # The mock behind the proxy fails every call to its model with a 503.
    prompt = f"[fault:503:model=mock-1] who answers? {secrets.token_hex(4)}"
    payload = {"model": UPSTREAM, "input": prompt, "fallbacks": [{"model": LITELLM_MOCKED}]}
    submitted = await app.submit(RESPOND_TASK, payload)

    await run_until_idle(app, WorkerConfig(poll_interval_ms=10))

    job = await app.get(submitted.job.id)
    assert job.state is JobState.SUCCEEDED
    assert job.result["output_text"] == MOCKED_TEXT
    history = await app.attempts(job.id)
    attempts = [(attempt.lane, attempt.outcome) for attempt in history]
    assert attempts == [
        (f"proxy/{UPSTREAM}", AttemptOutcome.RETRY),
        (f"proxy/{UPSTREAM}", AttemptOutcome.RETRY),
        (f"proxy/{LITELLM_MOCKED}", AttemptOutcome.SUCCEEDED),
    ]
    # What LiteLLM said of the upstream's incident is kept on the attempts it failed.
    failed = history[0].error
    assert failed is not None and "HTTP 503" in failed.message
