"""`llm.respond` jobs behind LiteLLM's proxy: a 429 whose wait LiteLLM relays only as
`llm_provider-retry-after(-ms)`, or that names no wait at all, pauses the lane and
uses no attempt.

The upstream is a `backroom mock-llm` process whose scripted 429s LiteLLM forwards.
Waits are checked as lower bounds read from the stored attempts.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from itertools import pairwise
from pathlib import Path

import pytest
from litellm_process import LiteLLMProxy
from proxy_models import UPSTREAM

from backroom import App, Job, JobState, WorkerConfig, run_until_idle
from backroom.core.job import Attempt, AttemptOutcome
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.task import RESPOND_TASK, register_llm_tasks

pytestmark = pytest.mark.slow


@pytest.fixture
async def app(litellm_proxy: LiteLLMProxy, tmp_path: Path) -> AsyncIterator[App]:
    provider = ProviderConfig(
        "litellm",
        litellm_proxy.base_url,
        api_key=litellm_proxy.api_key,
        chat_only=True,
        models=(ModelConfig(UPSTREAM),),
    )
    app = App(f"sqlite:///{tmp_path / 'jobs.db'}")
    respond = register_llm_tasks(app, LLMConfig((provider,)), call_timeout_s=60)
    async with app:
        yield app
    await respond.aclose()


async def run_job(app: App, prompt: str) -> tuple[Job, list[Attempt]]:
    submitted = await app.submit(RESPOND_TASK, {"model": UPSTREAM, "input": prompt})
    await run_until_idle(app, WorkerConfig(poll_interval_ms=10))
    job = await app.get(submitted.job.id)
    calls = [
        attempt
        for attempt in await app.attempts(job.id)
        if attempt.outcome is not AttemptOutcome.DEFERRED or attempt.error is not None
    ]
    return job, calls


async def test_a_wait_litellm_relays_under_its_prefix_pauses_the_lane(app: App) -> None:
    prompt = f"[fault:429:first=1:retry-after-ms=1500] hello {secrets.token_hex(4)}"
    job, (refused, answered) = await run_job(app, prompt)

    assert (job.state, job.attempt) == (JobState.SUCCEEDED, 1)
    assert refused.outcome is AttemptOutcome.DEFERRED
    assert refused.error is not None and refused.error.kind == "RateLimited"
    assert answered.started_at - refused.started_at >= 1_500


async def test_a_429_that_names_no_wait_backs_off_behind_litellm(app: App) -> None:
    job, calls = await run_job(app, f"[fault:429:first=2] hello {secrets.token_hex(4)}")

    assert (job.state, job.attempt) == (JobState.SUCCEEDED, 1)
    assert [call.outcome for call in calls] == [
        AttemptOutcome.DEFERRED,
        AttemptOutcome.DEFERRED,
        AttemptOutcome.SUCCEEDED,
    ]
    gaps = [later.started_at - earlier.started_at for earlier, later in pairwise(calls)]
    assert gaps[0] >= 500 and gaps[1] >= 1_000  # a growing backoff, at its lowest jitter
    (lane,) = await app.store.lanes(app.clock.now())
    assert lane.state.refusal_streak == 0
