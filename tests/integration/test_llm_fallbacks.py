"""`llm.respond` fallbacks end to end on each backend: the official SDK over loopback
HTTP against the mock, one of whose models has an incident (scripted per model).

A job moves to its next (provider, model) when its attempts in one lane are spent or
its lane is paused for longer than the config allows; each attempt names its lane, in
the store and in the job's document.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal

import pytest

from backroom import App, Job, JobState, RetryPolicy, WorkerConfig, run_until_idle
from backroom.core.job import JSON, AttemptOutcome
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.pricing import Prices
from backroom.llm.task import RESPOND_TASK, register_llm_tasks
from backroom.service.callers import Caller
from backroom.service.jobs import get_job
from backroom.service.usage import UsageRange, usage_report

PRICES = Prices(Decimal("0.15"), Decimal("0.075"), Decimal("0.60"))
POLL_MS = 10


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig(requests_per_minute=100_000)) as url:
        yield url


@pytest.fixture
async def app(base_url: str, database_url: str) -> AsyncIterator[App]:
    models = (ModelConfig("big", prices=PRICES), ModelConfig("small", prices=PRICES))
    providers = (
        ProviderConfig("primary", base_url, models=models),
        ProviderConfig("backup", base_url, models=models),
    )
    config = LLMConfig(
        providers,
        default_provider="primary",
        fallback_after_pause_ms=5_000,
        fallback_after_attempts=2,
    )
    app = App(database_url)
    quick = RetryPolicy(max_attempts=5, base_ms=10, cap_ms=20)
    respond = register_llm_tasks(app, config, call_timeout_s=10, retry=quick)
    async with app:
        yield app
    await respond.aclose()


async def run_job(app: App, payload: JSON) -> Job:
    submitted = await app.submit(RESPOND_TASK, payload, tenant="acme", metadata={"team": "a"})
    assert submitted.job.lane == "primary/big"
    await run_until_idle(app, WorkerConfig(poll_interval_ms=POLL_MS))
    return await app.get(submitted.job.id)


async def test_a_model_in_an_incident_moves_the_job_to_its_fallback_after_its_attempts(
    app: App,
) -> None:
    prompt = f"[fault:503:model=big] summarise ({secrets.token_hex(4)})"
    payload = {"model": "big", "input": prompt, "fallbacks": [{"model": "small"}]}

    job = await run_job(app, payload)

    assert job.state is JobState.SUCCEEDED
    assert (job.result["model"], job.lane, job.attempt) == ("small", "primary/small", 3)
    attempts = await app.attempts(job.id)
    assert [(attempt.lane, attempt.outcome) for attempt in attempts] == [
        ("primary/big", AttemptOutcome.RETRY),
        ("primary/big", AttemptOutcome.RETRY),
        ("primary/small", AttemptOutcome.SUCCEEDED),
    ]
    document = (await get_job(app, Caller("acme"), job.id)).body
    assert [attempt["lane"] for attempt in document["attempt_history"]] == [
        "primary/big",
        "primary/big",
        "primary/small",
    ]
    # The paid call is recorded against the provider and model that answered it.
    report = await usage_report(app, Caller("acme"), UsageRange(group_by="provider,model"))
    assert [(group["provider"], group["model"]) for group in report.body["groups"]] == [
        ("primary", "small")
    ]


async def test_a_long_pause_moves_the_job_to_another_provider_without_an_attempt(
    app: App,
) -> None:
    # The primary's model says: wait a minute. The config moves on after 5 s.
    prompt = f"[fault:429:model=big:retry-after=60] hello ({secrets.token_hex(4)})"
    fallbacks = [{"provider": "backup", "model": "big"}, {"model": "small"}]
    job = await run_job(app, {"model": "big", "input": prompt, "fallbacks": fallbacks})

    # The backup's "big" has the same name, so the same scripted fault: the job moves
    # on again, to the primary's small model (the fallback's provider defaults to the
    # job's own), and is answered there, having used one attempt.
    assert job.state is JobState.SUCCEEDED
    assert (job.lane, job.attempt) == ("primary/small", 1)
    lanes = [(attempt.lane, attempt.outcome) for attempt in await app.attempts(job.id)]
    assert lanes == [
        ("primary/big", AttemptOutcome.DEFERRED),
        ("backup/big", AttemptOutcome.DEFERRED),
        ("primary/small", AttemptOutcome.SUCCEEDED),
    ]
    # The paused lane stays paused for jobs without fallbacks.
    paused = {lane.name: lane.state.paused_until for lane in await app.store.lanes(app.clock.now())}
    assert paused["primary/big"] > app.clock.now() + 50_000


async def test_a_job_in_its_last_lane_fails_as_any_job_does(app: App) -> None:
    prompt = f"[fault:503] everyone is down ({secrets.token_hex(4)})"
    job = await run_job(app, {"model": "big", "input": prompt, "fallbacks": [{"model": "small"}]})

    assert job.state is JobState.FAILED
    lanes = [attempt.lane for attempt in await app.attempts(job.id)]
    assert lanes == ["primary/big"] * 2 + ["primary/small"] * 3
