"""An `llm.respond` job's result with the request features, and truncation as a failure.

A real app (in-memory SQLite, its usage stored by the default sink) runs the jobs
through the official SDK over loopback HTTP against the mock, on both APIs.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import pytest

from backroom import App, Job, JobState, RetryPolicy, WorkerConfig, run_until_idle
from backroom.core.job import JSON
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.task import register_llm_tasks
from backroom.store.sqlite.store import SqliteStore

PROVIDERS = pytest.mark.parametrize("provider", ["mock", "mock-chat"])
SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["yes", "no"]},
        "score": {"type": "number"},
    },
    "required": ["verdict", "score"],
}
TOOL = {"name": "search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig()) as url:
        yield url


@pytest.fixture
async def app(base_url: str) -> AsyncIterator[App]:
    config = LLMConfig(
        (
            ProviderConfig("mock", base_url, models=(ModelConfig("m"),)),
            ProviderConfig("mock-chat", base_url, chat_only=True, models=(ModelConfig("m"),)),
        ),
        "mock",
    )
    app = App(store=SqliteStore.from_url("sqlite://:memory:"), retry=RetryPolicy(base_ms=10))
    respond_task = register_llm_tasks(app, config, call_timeout_s=10)
    async with app:
        yield app
    await respond_task.aclose()


async def run_job(app: App, payload: JSON) -> Job:
    submitted = await app.submit("llm.respond", payload, tenant="acme")
    await run_until_idle(app, WorkerConfig(poll_interval_ms=10))
    return await app.get(submitted.job.id)


@PROVIDERS
async def test_a_plain_answer_says_how_it_ended(app: App, provider: str) -> None:
    job = await run_job(app, {"model": "m", "input": "How did it end?", "provider": provider})
    assert job.state is JobState.SUCCEEDED
    result = job.result
    assert (result["status"], result["finish_reason"], result["incomplete_details"]) == (
        "completed",
        "stop",
        None,
    )
    assert result["usage"]["reasoning_tokens"] == 0
    assert "output_parsed" not in result
    assert "tool_calls" not in result


@PROVIDERS
@pytest.mark.parametrize("stream", [False, True])
async def test_structured_output_is_parsed_into_the_result(
    app: App, provider: str, stream: bool
) -> None:
    payload = {
        "model": "m",
        "input": "Is it?",
        "provider": provider,
        "stream": stream,
        "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True},
    }
    job = await run_job(app, payload)
    assert job.state is JobState.SUCCEEDED
    assert job.result["output_parsed"] == {"verdict": "yes", "score": 1}
    assert json.loads(job.result["output_text"]) == job.result["output_parsed"]


@PROVIDERS
async def test_a_truncated_structured_answer_parses_to_null(app: App, provider: str) -> None:
    payload = {
        "model": "m",
        "input": "Is it?",
        "provider": provider,
        "max_output_tokens": 3,
        "json_schema": {"name": "verdict", "schema": SCHEMA},
    }
    job = await run_job(app, payload)
    assert job.state is JobState.SUCCEEDED
    assert job.result["output_parsed"] is None
    assert (job.result["status"], job.result["finish_reason"]) == ("incomplete", "length")
    assert job.result["incomplete_details"] == {"reason": "max_output_tokens"}


@PROVIDERS
@pytest.mark.parametrize("stream", [False, True])
async def test_tool_calls_are_in_the_result(app: App, provider: str, stream: bool) -> None:
    payload = {
        "model": "m",
        "input": "Find it",
        "provider": provider,
        "stream": stream,
        "tools": [TOOL],
    }
    job = await run_job(app, payload)
    assert job.state is JobState.SUCCEEDED
    (call,) = job.result["tool_calls"]
    assert call["name"] == "search"
    assert json.loads(call["arguments"]) == {"q": "mock q"}
    assert call["call_id"].startswith("call_mock")
    assert job.result["finish_reason"] == "tool_calls"
    assert job.result["output_text"] == ""


@PROVIDERS
async def test_reasoning_tokens_are_in_the_usage(app: App, provider: str) -> None:
    payload = {"model": "m", "input": "Ponder", "provider": provider, "reasoning_effort": "high"}
    job = await run_job(app, payload)
    usage = job.result["usage"]
    assert usage["reasoning_tokens"] == 256
    assert usage["output_tokens"] > 256


@PROVIDERS
async def test_fail_on_truncation_fails_a_cut_off_answer_for_good_and_keeps_its_usage(
    app: App, provider: str
) -> None:
    payload = {
        "model": "m",
        "input": "tell me everything " * 10,
        "provider": provider,
        "max_output_tokens": 4,
        "fail_on_truncation": True,
    }
    job = await run_job(app, payload)
    assert job.state is JobState.FAILED
    assert job.attempt == 1
    assert job.error is not None
    assert job.error.kind == "Permanent"
    assert job.error.message == (
        "truncated: the answer was cut off at the output token limit (4 output tokens, "
        "status incomplete, finish_reason length); raise max_output_tokens, or leave "
        "fail_on_truncation unset to accept a partial answer"
    )
    # The answer was paid for: its usage is recorded all the same.
    used = await app.store.usage_totals(job.id)
    assert (used.calls, used.output_tokens) == (1, 4)


@PROVIDERS
async def test_fail_on_truncation_lets_a_whole_answer_through(app: App, provider: str) -> None:
    payload = {"model": "m", "input": "short", "provider": provider, "fail_on_truncation": True}
    job = await run_job(app, payload)
    assert job.state is JobState.SUCCEEDED
    assert job.result["status"] == "completed"
