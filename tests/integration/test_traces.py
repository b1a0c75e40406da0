"""OpenTelemetry: a submission's `traceparent` is continued by each attempt's span, and
an LLM call is a child span with the GenAI attributes; read with the SDK's in-memory
exporter."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from backroom import App, JobContext, Permanent, WorkerConfig, run_until_idle
from backroom.api import ApiSettings, create_api
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.model_limits import ModelLimits
from backroom.llm.task import RESPOND_TASK, register_llm_tasks
from backroom.telemetry import Telemetry

ADMIN_KEY = "br_trace-admin-key"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
async def app(tmp_path: Path, exporter: InMemorySpanExporter) -> AsyncIterator[App]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = App(f"sqlite:///{tmp_path / 'traces.db'}")
    app.telemetry = Telemetry(process="traced:1", tracer_provider=provider)

    @app.task("echo")
    async def echo(_ctx: JobContext, payload: Any) -> Any:
        return payload

    @app.task("boom")
    async def boom(_ctx: JobContext, _payload: Any) -> None:
        raise Permanent("no")

    async with app:
        yield app


async def _submit(app: App, task: str, **headers: str) -> int:
    api = create_api(app, ApiSettings(admin_key=ADMIN_KEY))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(api), base_url="http://t") as http:
        response = await http.post(
            "/v1/jobs",
            json={"task": task, "input": 1},
            headers={"Authorization": f"Bearer {ADMIN_KEY}", **headers},
        )
    assert response.status_code == 202, response.text
    job_id: int = response.json()["id"]
    return job_id


def _attempts(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name.startswith("backroom.attempt")]


async def test_an_attempt_continues_the_trace_the_submission_came_with(
    app: App, exporter: InMemorySpanExporter
) -> None:
    job_id = await _submit(app, "echo", traceparent=TRACEPARENT)
    await run_until_idle(app)

    assert (await app.get(job_id)).traceparent == TRACEPARENT
    (span,) = _attempts(exporter)
    assert span.name == "backroom.attempt echo" and span.kind is SpanKind.CONSUMER
    assert format(span.context.trace_id, "032x") == TRACE_ID
    assert span.parent is not None and format(span.parent.span_id, "016x") == PARENT_ID
    attributes = dict(span.attributes or {})
    assert attributes["backroom.job.id"] == job_id and attributes["backroom.attempt"] == 1
    assert attributes["backroom.outcome"] == "succeeded"
    assert attributes["messaging.destination.name"] == "interactive"
    assert span.start_time is not None and span.end_time is not None
    assert span.start_time <= span.end_time


async def test_a_failed_attempt_is_an_error_and_a_bad_traceparent_starts_a_new_trace(
    app: App, exporter: InMemorySpanExporter
) -> None:
    await _submit(app, "boom", traceparent="00-xyz-nonsense-01")
    await run_until_idle(app)

    (span,) = _attempts(exporter)
    assert span.parent is None
    assert span.status.status_code is StatusCode.ERROR
    assert dict(span.attributes or {})["error.type"] == "Permanent"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig(requests_per_minute=100_000)) as url:
        yield url


async def test_an_llm_call_is_a_child_span_with_genai_attributes(
    app: App, exporter: InMemorySpanExporter, base_url: str
) -> None:
    model = ModelConfig("mini", ModelLimits(max_concurrency=2))
    respond = register_llm_tasks(
        app, LLMConfig((ProviderConfig("openai", base_url, models=(model,)),)), call_timeout_s=10
    )
    try:
        job_id = await _submit_llm(app)
        await run_until_idle(app, WorkerConfig(poll_interval_ms=10))
    finally:
        await respond.aclose()

    usage = await app.store.usage_totals(job_id)
    (attempt,) = _attempts(exporter)
    (call,) = [span for span in exporter.get_finished_spans() if span.name == "chat mini"]
    assert call.kind is SpanKind.CLIENT
    assert call.parent is not None and call.parent.span_id == attempt.context.span_id
    assert call.context.trace_id == attempt.context.trace_id
    assert dict(call.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": "openai",
        "gen_ai.request.model": "mini",
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
    }


async def _submit_llm(app: App) -> int:
    submitted = await app.submit(RESPOND_TASK, {"model": "mini", "input": "Trace me."})
    return submitted.job.id


async def test_without_a_tracer_provider_nothing_is_recorded(tmp_path: Path) -> None:
    app = App(f"sqlite:///{tmp_path / 'plain.db'}")

    @app.task("echo")
    async def echo(_ctx: JobContext, payload: Any) -> Any:
        return payload

    async with app:
        job_id = await _submit(app, "echo", traceparent=TRACEPARENT)
        await run_until_idle(app)
        assert (await app.get(job_id)).state.value == "succeeded"
