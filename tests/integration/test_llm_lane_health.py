"""`llm.respond` against the mock over loopback HTTP: 429s that name no wait (or only
LiteLLM's relayed one), and a burst of server errors that opens the lane's breaker.

Real sockets need the system clock: waits are checked as lower bounds read from the
stored attempts, which load can only lengthen.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator
from itertools import pairwise

import pytest

from backroom import App, Job, JobState, WorkerConfig, run_until_idle
from backroom.core.job import Attempt, AttemptOutcome
from backroom.core.lanes import BREAKER_THRESHOLD
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.model_limits import ModelLimits
from backroom.llm.task import RESPOND_TASK, register_llm_tasks

POLL_MS = 10
MODEL = "flaky"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig()) as url:
        yield url


@pytest.fixture
async def app(base_url: str, database_url: str) -> AsyncIterator[App]:
    model = ModelConfig(MODEL, ModelLimits(max_concurrency=BREAKER_THRESHOLD))
    app = App(database_url)
    respond = register_llm_tasks(
        app, LLMConfig((ProviderConfig("mock", base_url, models=(model,)),))
    )
    async with app:
        yield app
    await respond.aclose()


async def run_jobs(app: App, prompts: list[str]) -> list[Job]:
    submitted = [
        (await app.submit(RESPOND_TASK, {"model": MODEL, "input": prompt})).job
        for prompt in prompts
    ]
    await run_until_idle(app, WorkerConfig(concurrency=8, poll_interval_ms=POLL_MS))
    return [await app.get(job.id) for job in submitted]


def calls(attempts: list[Attempt]) -> list[Attempt]:
    """The attempts that made a call: all but those the lane sent back unstarted."""
    return [a for a in attempts if a.outcome is not AttemptOutcome.DEFERRED or a.error]


def gaps_ms(attempts: list[Attempt]) -> list[int]:
    """From the start of each attempt to the start of the next."""
    return [later.started_at - earlier.started_at for earlier, later in pairwise(attempts)]


async def test_429s_that_name_no_wait_back_off_and_use_no_attempt(app: App) -> None:
    prompt = f"[fault:429:first=3] busy? {secrets.token_hex(4)}"
    (job,) = await run_jobs(app, [prompt])

    assert (job.state, job.attempt) == (JobState.SUCCEEDED, 1)
    attempts = calls(await app.attempts(job.id))
    assert [attempt.outcome for attempt in attempts] == [AttemptOutcome.DEFERRED] * 3 + [
        AttemptOutcome.SUCCEEDED
    ]
    assert all(a.error is not None and a.error.kind == "RateLimited" for a in attempts[:3])
    # Half a second, then one, then two at the least (equal jitter): a growing backoff.
    floors = [500, 1_000, 2_000]
    assert all(gap >= floor for gap, floor in zip(gaps_ms(attempts), floors, strict=True))
    (lane,) = await app.store.lanes(app.clock.now())
    assert lane.state.refusal_streak == 0  # the answer ended the streak


async def test_a_wait_relayed_by_litellm_is_honoured(app: App) -> None:
    prompt = f"[fault:429:first=1:provider-retry-after-ms=1500] busy? {secrets.token_hex(4)}"
    (job,) = await run_jobs(app, [prompt])

    assert (job.state, job.attempt) == (JobState.SUCCEEDED, 1)
    refused, answered = calls(await app.attempts(job.id))
    assert refused.outcome is AttemptOutcome.DEFERRED
    assert answered.started_at - refused.started_at >= 1_500


async def test_a_burst_of_server_errors_opens_the_breaker_until_a_probe_answers(
    app: App,
) -> None:
    tag = secrets.token_hex(4)
    prompts = [f"[fault:503:first=1] job {n} {tag}" for n in range(BREAKER_THRESHOLD)]
    jobs = await run_jobs(app, prompts)

    assert [(job.state, job.attempt) for job in jobs] == [(JobState.SUCCEEDED, 2)] * len(jobs)
    histories = [await app.attempts(job.id) for job in jobs]
    failed = [history[0] for history in histories]
    assert {attempt.outcome for attempt in failed} == {AttemptOutcome.RETRY}
    last_failure = max(attempt.finished_at or attempt.started_at for attempt in failed)
    first_answer = min(history[-1].started_at for history in histories)
    # The lane cooled down (2.5 s at the least) before its probe, for every job.
    assert first_answer - last_failure >= 2_500
    (lane,) = await app.store.lanes(app.clock.now())
    assert lane.state.failure_streak == 0
