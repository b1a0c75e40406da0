"""Batch offload end to end for each provider kind: `llm.respond` jobs of the `batch`
queue go through the official SDK to the mock's batch API (OpenAI's Files and Batches,
Anthropic's Message Batches), and each job ends from its own line: successes at the
batch price, per-line failures classified as online calls' are (retryable lines into
a later batch, permanent ones failing their jobs)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from decimal import Decimal

import pytest
from batch_offload_support import (
    all_finished,
    batch_job,
    mock_batches,
    offload_app,
    running_worker,
)

from backroom.core.job import JobState
from backroom.llm.mock.batch_jobs import BatchMockConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.settings import ProviderKind

JOBS = 2_500


@pytest.fixture
def base_url() -> Iterator[str]:
    with running_mock(MockConfig(batches=BatchMockConfig(delay_ms=200))) as url:
        yield url


def _prompt(number: int, tag: str) -> str:
    if number % 100 == 7:
        return f"job {number} {tag} [fault:400]"  # permanent: the job fails
    if number % 100 == 8:
        return f"job {number} {tag} [fault:503:first=1]"  # retryable: the next batch
    return f"job {number} {tag}"


# Each provider once and each store once (the other pairs add a minute of suite time and
# nothing new: a store's write-back does not depend on the provider, nor the reverse).
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("database_url", "kind"),
    [("sqlite", "anthropic"), pytest.param("postgres", "openai", marks=pytest.mark.postgres)],
    indirect=["database_url"],
)
async def test_2500_jobs_end_from_their_lines(
    base_url: str, database_url: str, kind: ProviderKind
) -> None:
    tag = secrets.token_hex(4)
    quick = {"flush_after_s": 3}
    async with offload_app(database_url, base_url, quick, kind) as (app, _respond):
        await app.submit_many([batch_job(app, _prompt(n, tag)) for n in range(JOBS)])
        async with running_worker(app):
            jobs = await all_finished(app, JOBS, seconds=500)
    failed = [job for job in jobs if job.state is JobState.FAILED]
    succeeded = [job for job in jobs if job.state is JobState.SUCCEEDED]
    assert len(failed) == JOBS // 100
    assert all("HTTP 400" in str(job.error) for job in failed)
    assert len(succeeded) == JOBS - len(failed)
    retried = [job for job in succeeded if job.attempt == 2]
    assert len(retried) == JOBS // 100
    assert all(job.attempt == 1 for job in succeeded if job not in retried)
    batches = await mock_batches(base_url, kind)
    lines = sum(batch.total for batch in batches)
    assert lines == JOBS + len(retried)  # no request sent twice but the retried lines
    # Flushed at 1,000 jobs or after 3 s (how many depends on the machine's speed).
    assert max(batch.total for batch in batches) <= 1_000
    usage = succeeded[0].result["usage"]
    # At half of $0.15 (input) and $0.60 (output) a million tokens.
    half = usage["input_tokens"] * Decimal("0.075") + usage["output_tokens"] * Decimal("0.30")
    assert Decimal(usage["cost_usd"]) == half / 1_000_000
