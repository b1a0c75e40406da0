"""`llm.respond` jobs behind LiteLLM's proxy, through the official OpenAI SDK, on SQLite:
answers, recorded usage and cost, streaming, and which provider errors are retried.

Each test uses its own prompt text, so the mock's per-prompt state (fault counts, its
prompt cache) never leaks between tests.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path

import pytest
from litellm_process import LiteLLMProxy
from proxy_apps import outcomes, run_jobs, started_app
from proxy_models import LITELLM_MOCKED, MOCKED_TEXT, UPSTREAM

from backroom import App, Job, JobState
from backroom.core.job import JSON, AttemptOutcome
from backroom.core.usage import UsageTotals, pico_usd
from backroom.llm.config import ModelConfig
from backroom.llm.pricing import Prices, Usage, cost_usd
from backroom.llm.tokens import estimate_tokens

pytestmark = pytest.mark.slow

PRICES = Prices(Decimal("0.15"), Decimal("0.075"), Decimal("0.60"))
MODELS = [ModelConfig(name, prices=PRICES) for name in (LITELLM_MOCKED, UPSTREAM)]
STREAMS = pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])


@pytest.fixture(params=[False, True], ids=["responses", "chat"])
async def app(
    request: pytest.FixtureRequest, litellm_proxy: LiteLLMProxy, tmp_path: Path
) -> AsyncIterator[App]:
    """`started_app` through each API in turn."""
    async with started_app(litellm_proxy, tmp_path, chat_only=request.param, models=MODELS) as app:
        yield app


async def run_job(app: App, payload: JSON, max_attempts: int | None = None) -> Job:
    return (await run_jobs(app, [payload], max_attempts=max_attempts))[0]


def _prompt(what: str) -> str:
    return f"{what} ({secrets.token_hex(4)})"


async def _assert_usage_recorded(app: App, job: Job) -> None:
    """The job's stored usage is its result's, priced by the table."""
    usage = job.result["usage"]
    tokens = Usage(usage["input_tokens"], usage["cached_tokens"], usage["output_tokens"])
    assert tokens.input_tokens > 0 and tokens.output_tokens > 0
    cost = pico_usd(cost_usd(tokens, PRICES))
    assert pico_usd(Decimal(usage["cost_usd"])) == cost
    assert await app.store.usage_totals(job.id) == UsageTotals(
        1, tokens.input_tokens, tokens.cached_tokens, tokens.output_tokens, cost
    )


@STREAMS
async def test_a_forwarded_call_answers_and_its_usage_is_recorded(app: App, stream: bool) -> None:
    prompt = _prompt(f"What does the proxy forward? stream={stream}")
    job = await run_job(app, {"model": UPSTREAM, "input": prompt, "stream": stream})
    assert job.state is JobState.SUCCEEDED, job.error
    assert job.result["output_text"].endswith(f"] {prompt}")
    # The mock's own count, passed on by LiteLLM unchanged.
    assert job.result["usage"]["input_tokens"] == estimate_tokens(prompt)
    await _assert_usage_recorded(app, job)
    if stream:
        assert job.partial == {"attempt": 1, "text": job.result["output_text"]}


# LiteLLM streams no mock_response through /v1/responses: see the last test.
@pytest.mark.parametrize(
    ("chat_only", "stream"),
    [(False, False), (True, False), (True, True)],
    ids=["responses-whole", "chat-whole", "chat-streamed"],
)
async def test_a_model_litellm_answers_itself_is_recorded_too(
    litellm_proxy: LiteLLMProxy, tmp_path: Path, chat_only: bool, stream: bool
) -> None:
    prompt = _prompt(f"Who answers? stream={stream}")
    async with started_app(litellm_proxy, tmp_path, chat_only=chat_only, models=MODELS) as app:
        job = await run_job(app, {"model": LITELLM_MOCKED, "input": prompt, "stream": stream})
        assert job.state is JobState.SUCCEEDED, job.error
        assert job.result["output_text"] == MOCKED_TEXT
        await _assert_usage_recorded(app, job)


async def test_a_400_from_upstream_fails_the_job_at_once(app: App) -> None:
    job = await run_job(app, {"model": UPSTREAM, "input": _prompt("[fault:400] refused")})
    assert job.state is JobState.FAILED
    assert job.error is not None
    assert "BadRequestError (HTTP 400)" in job.error.message
    assert await outcomes(app, job) == [AttemptOutcome.FAILED]


async def test_a_5xx_from_upstream_is_retried(app: App) -> None:
    prompt = _prompt("[fault:503:first=1] busy once")
    job = await run_job(app, {"model": UPSTREAM, "input": prompt})
    assert job.state is JobState.SUCCEEDED, job.error
    assert await outcomes(app, job) == [AttemptOutcome.RETRY, AttemptOutcome.SUCCEEDED]
    first = (await app.attempts(job.id))[0]
    assert first.error is not None
    assert "HTTP 503" in first.error.message


async def test_litellms_500_at_the_start_of_a_stream_is_retried_with_its_message(
    litellm_proxy: LiteLLMProxy, tmp_path: Path
) -> None:
    # LiteLLM (1.108) answers a streamed /v1/responses call to a mock_response model
    # with HTTP 500 "Error processing stream start": a server error like any other.
    payload: JSON = {"model": LITELLM_MOCKED, "input": _prompt("stream it"), "stream": True}
    async with started_app(litellm_proxy, tmp_path, models=MODELS) as app:
        job = await run_job(app, payload, max_attempts=2)
        assert job.state is JobState.FAILED
        assert await outcomes(app, job) == [AttemptOutcome.RETRY, AttemptOutcome.FAILED]
        assert job.error is not None
        assert "Error processing stream start" in job.error.message
