"""Anthropic's Message Batches through the real `anthropic` SDK against the mock: a
batch submitted, polled while its lines finish one by one, its results read back as
online answers (per-line failures classified like online errors), found again after a
crash (by time and size while in progress, by the name's tag once ended), cancelled,
and expired.

The mock and the adapter share a clock the test moves by hand.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from backroom.core.errors import Permanent, Retryable
from backroom.llm.batch.provider import (
    ANTHROPIC_BATCH_LIMITS,
    BatchIntent,
    BatchLine,
    BatchState,
    LineOutcome,
    LineResult,
    custom_id,
)
from backroom.llm.config import ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.providers.anthropic.batch import AnthropicBatches
from backroom.llm.providers.anthropic.provider import make_client
from backroom.llm.request import LLMRequest

T0 = 1_800_000_000_000
DELAY_MS = 10_000
HOUR_MS = 3_600_000
MODEL = "claude-haiku-4-5"


class HandClock:
    """Moved only by the test (safe to read from the mock's thread)."""

    def __init__(self) -> None:
        self.time = T0

    def now(self) -> int:
        return self.time

    async def sleep(self, ms: float) -> None:
        raise AssertionError("nothing here should wait")


@pytest.fixture(scope="module")
def clock() -> HandClock:
    return HandClock()


@pytest.fixture(scope="module")
def base_url(clock: HandClock) -> Iterator[str]:
    with running_mock(MockConfig(batch_delay_ms=DELAY_MS), clock) as url:
        yield url


@pytest.fixture
async def batches(base_url: str, clock: HandClock) -> AsyncIterator[AnthropicBatches]:
    client = make_client(ProviderConfig("claude", base_url, kind="anthropic"), timeout_s=5)
    yield AnthropicBatches(client, clock=clock)
    await client.close()


def _lines(*prompts: str, first_job: int = 1) -> list[BatchLine]:
    return [
        BatchLine(custom_id(first_job + index, 1), LLMRequest(MODEL, prompt))
        for index, prompt in enumerate(prompts)
    ]


async def _all(batches: AnthropicBatches, batch_id: str) -> dict[str, LineResult]:
    return {line.custom_id: line async for line in batches.results(batch_id)}


async def test_a_batch_runs_its_lines_and_answers_each_like_an_online_call(
    batches: AnthropicBatches, clock: HandClock
) -> None:
    lines = _lines("first question", "broken [fault:400]", "busy [fault:529]", "last one")
    batch_id = await batches.submit("run-1", lines)

    opened = await batches.poll(batch_id)
    clock.time += DELAY_MS // 2
    halfway = await batches.poll(batch_id)
    clock.time += DELAY_MS
    ended = await batches.poll(batch_id)
    results = await _all(batches, batch_id)

    assert (opened.state, opened.counts.total, opened.counts.pending) == (BatchState.OPEN, 4, 4)
    assert halfway.state is BatchState.OPEN and halfway.counts.pending == 2
    assert (ended.state, ended.counts.succeeded, ended.counts.failed) == (BatchState.ENDED, 2, 2)
    first = results[lines[0].custom_id]
    assert first.outcome is LineOutcome.SUCCEEDED and first.result is not None
    assert first.result.output_text.endswith("] first question")
    assert first.result.usage.input_tokens > 0 and first.result.usage.output_tokens > 0
    refused, busy = results[lines[1].custom_id], results[lines[2].custom_id]
    assert refused.outcome is LineOutcome.ERRORED and isinstance(refused.error, Permanent)
    assert "invalid_request_error" in str(refused.error)
    assert isinstance(busy.error, Retryable) and "overloaded_error" in str(busy.error)
    assert set(results) == {line.custom_id for line in lines}


def _intent(name: str, requests: int, at: int, *adopted: str) -> BatchIntent:
    return BatchIntent(name, at, requests, created_by=at + 60_000, adopted=frozenset(adopted))


async def test_a_batch_in_progress_is_found_by_its_time_and_size(
    batches: AnthropicBatches, clock: HandClock
) -> None:
    clock.time += HOUR_MS  # out of the window of the other tests' batches
    at = clock.time
    mine = await batches.submit("find-me", _lines("one", "two", first_job=10))
    other = await batches.submit("someone-else", _lines("three", first_job=20))

    assert await batches.find(_intent("find-me", 2, at)) == mine
    assert await batches.find(_intent("someone-else", 1, at)) == other
    assert await batches.find(_intent("find-me", 2, at, mine)) is None  # adopted already
    assert await batches.find(_intent("never-submitted", 3, at)) is None  # no such size
    assert await batches.find(_intent("find-me", 2, at + 2 * HOUR_MS)) is None  # too late


async def test_batches_of_one_size_pair_in_order_then_by_their_tags(
    batches: AnthropicBatches, clock: HandClock
) -> None:
    clock.time += HOUR_MS
    first_at = clock.time
    first = await batches.submit("twin-a", _lines("a1", "a2", first_job=60))
    clock.time += 1_000
    second = await batches.submit("twin-b", _lines("b1", "b2", first_job=70))

    # In progress: the earliest batch not adopted yet (the poller recovers oldest first).
    assert await batches.find(_intent("twin-a", 2, first_at)) == first
    assert await batches.find(_intent("twin-b", 2, first_at + 1_000, first)) == second
    clock.time += DELAY_MS
    # Ended: each batch's lines name the batch that sent them.
    assert await batches.find(_intent("twin-b", 2, first_at)) == second
    assert await batches.find(_intent("twin-a", 2, first_at)) == first
    assert await batches.find(_intent("never-submitted", 2, first_at)) is None


async def test_a_cancelled_batch_gives_its_unfinished_lines_back(
    batches: AnthropicBatches, clock: HandClock
) -> None:
    lines = _lines("a", "b", "c", "d", first_job=30)
    batch_id = await batches.submit("cancel-me", lines)
    clock.time += DELAY_MS // 2

    status = await batches.cancel(batch_id)
    results = await _all(batches, batch_id)

    assert status.state is BatchState.CANCELLED
    outcomes = [results[line.custom_id].outcome for line in lines]
    assert outcomes == [LineOutcome.SUCCEEDED] * 2 + [LineOutcome.UNFINISHED] * 2


async def test_an_expired_batch_gives_its_unfinished_lines_back(clock: HandClock) -> None:
    config = MockConfig(batch_delay_ms=DELAY_MS, batch_expiry_ms=DELAY_MS // 4)
    with running_mock(config, clock) as url:
        provider = ProviderConfig("claude", url, kind="anthropic")
        batches = AnthropicBatches.for_provider(provider, clock=clock, timeout_s=5)
        try:
            lines = _lines("e", "f", "g", "h", first_job=40)
            batch_id = await batches.submit("expire-me", lines)
            clock.time += DELAY_MS // 4
            status = await batches.poll(batch_id)
            results = await _all(batches, batch_id)
        finally:
            await batches.aclose()

    assert status.state is BatchState.EXPIRED and status.counts.succeeded == 1
    outcomes = [results[line.custom_id].outcome for line in lines]
    assert outcomes == [LineOutcome.SUCCEEDED] + [LineOutcome.UNFINISHED] * 3


async def test_an_unknown_batch_is_a_permanent_error(batches: AnthropicBatches) -> None:
    with pytest.raises(Permanent, match="not_found_error"):
        await batches.poll("msgbatch_nope")


def test_line_bytes_bound_the_request_body(batches: AnthropicBatches) -> None:
    (line,) = _lines("x" * 1000, first_job=50)
    assert 1000 < batches.line_bytes(line) < 2000
    assert batches.limits == ANTHROPIC_BATCH_LIMITS
