"""Jobs behind LiteLLM's rate limits and the limits it forwards (issue 10's observations).

Behind a 3 requests/minute model of LiteLLM's, 8 jobs once failed half their number:
LiteLLM's own 429s carry their wait only as `llm_provider-retry-after: 60` (and no
`x-ratelimit-*` headers), backroom waited a fixed second, did not pause the lane, and
after 20 refusals spent the jobs' attempts.

Each test has a model of the session's proxy to itself (a window no other test used).
One job more than a window holds is enough: it is refused, waits out the window
(LiteLLM's own 429 says 60 s, the mock's about 30 s) and must then succeed, with no
attempt spent on the refusals and no knocking every second; more jobs would only wait
more windows (8 jobs behind LiteLLM's limit took three of them, ~2.5 minutes). The two
scenarios run side by side: each waits about a minute, mostly idle.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import pytest
from litellm_process import LiteLLMProxy
from proxy_apps import outcomes, run_jobs, started_app
from proxy_models import (
    LITELLM_JOBS_LIMITED,
    LITELLM_LIMITED_RPM,
    UPSTREAM_JOBS_LIMITED,
    UPSTREAM_LIMITED_RPM,
)

from backroom import App, Job, JobState
from backroom.core.job import AttemptOutcome

pytestmark = pytest.mark.slow

# A minute's window and the session proxy's start-up: within the test's own timeout.
TIMEOUT_S = 420


async def _refusals(app: App, jobs: list[Job]) -> int:
    """How many of the jobs' calls were refused (deferred attempts), all jobs together."""
    total = 0
    for job in jobs:
        total += (await outcomes(app, job)).count(AttemptOutcome.DEFERRED)
    return total


async def _assert_no_attempt_spent_on_refusals(app: App, jobs: list[Job]) -> None:
    for job in jobs:
        assert job.state is JobState.SUCCEEDED, (job.input, job.error)
        ended = await outcomes(app, job)
        assert [outcome for outcome in ended if outcome is not AttemptOutcome.DEFERRED] == [
            AttemptOutcome.SUCCEEDED
        ], job.input


async def _jobs_behind(proxy: LiteLLMProxy, folder: Path, model: str, rpm: int) -> None:
    """One job more than `model` takes in a minute: all succeed, no attempt spent."""
    jobs_count = rpm + 1
    payloads = [
        {"model": model, "input": f"job {n} {secrets.token_hex(4)}"} for n in range(jobs_count)
    ]
    folder.mkdir()
    async with started_app(proxy, folder) as app:
        jobs = await run_jobs(app, payloads)
        await _assert_no_attempt_spent_on_refusals(app, jobs)
        # The lane pauses on a refusal: the jobs do not each knock every second.
        assert await _refusals(app, jobs) <= 2 * jobs_count, model


@pytest.mark.timeout(TIMEOUT_S)
async def test_jobs_behind_litellms_own_limit_and_a_forwarded_one_all_succeed(
    litellm_proxy: LiteLLMProxy, tmp_path: Path
) -> None:
    # The two wait out their windows side by side (two apps, each with its own database).
    await asyncio.gather(
        # LiteLLM's own limit: its 429 names its wait only as llm_provider-retry-after: 60.
        _jobs_behind(litellm_proxy, tmp_path / "own", LITELLM_JOBS_LIMITED, LITELLM_LIMITED_RPM),
        # The mock behind LiteLLM allows 2 requests a minute; its 429s come through with
        # llm_provider-retry-after(-ms) (about 30 s), and its x-ratelimit-limit/remaining
        # headers under their own names too, from which the lane learns the limit.
        _jobs_behind(
            litellm_proxy, tmp_path / "forwarded", UPSTREAM_JOBS_LIMITED, UPSTREAM_LIMITED_RPM
        ),
    )
