"""Background mode: a response is created, its id recorded before waiting, and polled;
a job whose earlier attempt left such a response takes it up instead of paying again.

Against the mock over loopback HTTP, through the official SDK, in a real app.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from decimal import Decimal

import openai
import pytest

from backroom import App, JobState, RetryPolicy, WorkerConfig, run_until_idle
from backroom.core.spend import CallIntent
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.pricing import Prices
from backroom.llm.task import register_llm_tasks
from backroom.store.sqlite.store import SqliteStore

PRICES = Prices(Decimal("2.50"), Decimal("1.25"), Decimal("10"))
LATENCY_MS = 300
POLL_MS = 10


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig(latency_ms=LATENCY_MS)) as url:
        yield url


@pytest.fixture
async def app(base_url: str) -> AsyncIterator[App]:
    priced = ModelConfig("priced", prices=PRICES)
    provider = ProviderConfig("mock", base_url, models=(priced,), background=True)
    app = App(store=SqliteStore.from_url("sqlite://:memory:"), retry=RetryPolicy(base_ms=10))
    respond_task = register_llm_tasks(app, LLMConfig((provider,)), call_timeout_s=10)
    async with app:
        yield app
    await respond_task.aclose()


async def test_a_background_call_is_created_then_polled_until_done(app: App) -> None:
    submitted = await app.submit("llm.respond", {"model": "priced", "input": "in the back"})

    await run_until_idle(app, WorkerConfig(poll_interval_ms=POLL_MS))

    job = await app.get(submitted.job.id)
    assert job.state is JobState.SUCCEEDED
    assert job.result["output_text"].endswith("] in the back")
    assert job.result["response_id"].startswith("resp_mock")
    assert job.result["usage"]["estimated"] is False
    assert await app.store.open_calls(job.id) == []
    assert (await app.store.usage_totals(job.id)).calls == 1


async def test_a_response_an_earlier_attempt_left_is_taken_up_not_made_again(
    app: App, base_url: str
) -> None:
    payload = {"model": "priced", "input": "left behind"}
    submitted = await app.submit("llm.respond", payload)
    # A worker claimed the job, created its background response, noted its id, and died.
    async with openai.AsyncOpenAI(base_url=base_url, api_key="none") as client:
        made = await client.responses.create(model="priced", input="left behind", background=True)
    assert made.status == "queued"
    now = app.clock.now()
    (claimed,) = await app.store.claim([], 1, "dead-worker", 1, now)
    lease = claimed.lease
    intent = CallIntent(claimed.id, lease.token, 1, "default", "mock", "priced", 10**12, now)
    await app.store.call_open(lease, intent, None)
    await app.store.call_response(claimed.id, lease.token, made.id)
    assert await app.store.expire_leases(now + 2)

    await run_until_idle(app, WorkerConfig(poll_interval_ms=POLL_MS))

    job = await app.get(submitted.job.id)
    assert job.state is JobState.SUCCEEDED
    assert job.result["response_id"] == made.id
    totals = await app.store.usage_totals(job.id)
    # One call, paid at what it used: not charged at its reservation, nor made twice.
    assert (totals.calls, totals.estimated_calls) == (1, 0)
    assert totals.cost_pico_usd < 10**12


async def test_the_mock_keeps_background_responses_until_done(base_url: str) -> None:
    async with openai.AsyncOpenAI(base_url=base_url, api_key="none", max_retries=0) as client:
        made = await client.responses.create(model="m", input="hold on", background=True)
        early = await client.responses.retrieve(made.id)
        with pytest.raises(openai.NotFoundError):
            await client.responses.retrieve("resp_unknown")

    assert (made.status, made.usage) == ("queued", None)
    assert early.status == "in_progress"
