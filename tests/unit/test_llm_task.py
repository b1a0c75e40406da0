"""The `llm.respond` task in a real app (in-memory SQLite, system clock) against the mock,
through the official SDK over loopback HTTP; each test has its own prompt (fault counts)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from decimal import Decimal

import pytest

from backroom import App, Job, JobState, Lease, RetryPolicy, WorkerConfig, run_until_idle
from backroom.core.errors import InputRefused
from backroom.core.job import JSON, AttemptOutcome, NewJob
from backroom.core.lane_health import CallOutcome
from backroom.core.usage import AttemptUsage, pico_usd
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.lanes import DEFAULT_OUTPUT_TOKENS
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.model_limits import ModelLimits
from backroom.llm.pricing import Prices, Usage, cost_usd
from backroom.llm.ratelimit_headers import RateLimitSnapshot
from backroom.llm.task import CallReport, register_llm_tasks
from backroom.llm.tokens import estimate_tokens
from backroom.store.sqlite.store import SqliteStore

PRICES = Prices(Decimal("0.15"), Decimal("0.075"), Decimal("0.60"))
MOCK_RPM = 100_000  # never refuses a call here, but answers carry rate-limit headers
STREAM_WORDS = 40
STREAM_DELTA_MS = 20
POLL_MS = 10  # real time passes: a burst worker soon sees that it is done


class ReportList:
    """A `CallSink` that keeps what it is told."""

    def __init__(self) -> None:
        self.reports: list[CallReport] = []

    async def call_ended(self, report: CallReport) -> None:
        self.reports.append(report)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    config = MockConfig(requests_per_minute=MOCK_RPM, stream_interval_ms=STREAM_DELTA_MS)
    with running_mock(config) as url:
        yield url


def llm_config(base_url: str) -> LLMConfig:
    priced = ModelConfig("priced", ModelLimits(max_concurrency=4), PRICES)
    return LLMConfig(
        providers=(
            ProviderConfig("mock", base_url, models=(priced, ModelConfig("unpriced"))),
            ProviderConfig("mock-chat", base_url, chat_only=True, models=(priced,)),
        ),
        default_provider="mock",
    )


@pytest.fixture
def sink() -> ReportList:
    return ReportList()


@pytest.fixture
async def app(base_url: str, sink: ReportList) -> AsyncIterator[App]:
    app = App(store=SqliteStore.from_url("sqlite://:memory:"), retry=RetryPolicy(base_ms=10))
    respond_task = register_llm_tasks(app, llm_config(base_url), sink, call_timeout_s=10)
    async with app:
        yield app
    await respond_task.aclose()


@pytest.fixture
def partials(app: App, monkeypatch: pytest.MonkeyPatch) -> list[JSON]:
    """Every partial output the jobs store, in order."""
    stored: list[JSON] = []
    store_progress = app.store.set_progress

    async def spy(lease: Lease, fraction: float | None, partial: JSON, now: int) -> bool:
        stored.append(partial)
        return await store_progress(lease, fraction, partial, now)

    monkeypatch.setattr(app.store, "set_progress", spy)
    return stored


async def run_job(
    app: App, payload: JSON, tenant: str = "acme", metadata: dict[str, JSON] | None = None
) -> Job:
    submitted = await app.submit("llm.respond", payload, tenant=tenant, metadata=metadata)
    await run_until_idle(app, WorkerConfig(poll_interval_ms=POLL_MS))
    return await app.get(submitted.job.id)


@pytest.mark.parametrize("provider", ["mock", "mock-chat"])
async def test_an_answer_is_the_result_with_its_usage_and_cost(
    app: App, sink: ReportList, provider: str
) -> None:
    prompt = f"What is a lane? ({provider})"
    payload = {"model": "priced", "input": prompt, "prompt_version": "v7", "provider": provider}
    job = await run_job(app, payload, metadata={"team": "search"})
    assert job.state is JobState.SUCCEEDED
    output_text = job.result["output_text"]
    assert output_text.endswith(f"] {prompt}")
    tokens = Usage(estimate_tokens(prompt), 0, estimate_tokens(output_text))
    cost = cost_usd(tokens, PRICES)
    assert job.result["model"] == "priced"
    assert job.result["usage"] == {
        "input_tokens": tokens.input_tokens,
        "cached_tokens": 0,
        "output_tokens": tokens.output_tokens,
        "reasoning_tokens": 0,
        "cost_usd": f"{cost:f}",
        "estimated": False,
    }
    (report,) = sink.reports
    assert report.job.id == job.id
    assert report.lane == f"{provider}/priced"
    # The model's provider charges at admission: the reserved output stays charged.
    assert report.lane_tokens == tokens.input_tokens + DEFAULT_OUTPUT_TOKENS
    assert report.rate_limits.requests.limit == MOCK_RPM
    assert report.pause_until is None
    assert (usage := report.usage) is not None
    assert usage == AttemptUsage(
        job_id=job.id,
        lease_token=1,
        attempt=1,
        tenant="acme",
        model="priced",
        prompt_version="v7",
        input_tokens=tokens.input_tokens,
        cached_tokens=0,
        output_tokens=tokens.output_tokens,
        cost_pico_usd=pico_usd(cost),
        at=usage.at,
        provider=provider,
        metadata={"team": "search"},
    )
    assert report.sent_at <= usage.at


async def test_a_model_without_prices_has_no_cost(app: App, sink: ReportList) -> None:
    job = await run_job(app, {"model": "unpriced", "input": "free of charge?"})
    assert job.result["usage"]["cost_usd"] is None
    (report,) = sink.reports
    assert report.usage is not None
    assert report.usage.cost_pico_usd is None
    assert report.lane == "mock/unpriced"


@pytest.mark.usefixtures("every_streamed_delta_reported")
async def test_a_streamed_answer_shows_its_text_growing_while_the_job_runs(
    app: App, sink: ReportList, partials: list[JSON]
) -> None:
    words = " ".join(f"word{n}" for n in range(STREAM_WORDS))
    job = await run_job(app, {"model": "priced", "input": words, "stream": True})
    assert job.state is JobState.SUCCEEDED
    final = job.result["output_text"]
    assert final.endswith(words)
    assert partials[0] == {"attempt": 1, "text": ""}  # the attempt starts from nothing
    assert all(isinstance(partial, dict) and partial["attempt"] == 1 for partial in partials)
    texts = [partial["text"] for partial in partials if isinstance(partial, dict)]
    assert all(final.startswith(text) for text in texts)
    assert [len(text) for text in texts] == sorted(len(text) for text in texts)
    assert len(set(texts)) > 2  # the empty start, at least one report mid-stream, the end
    assert job.partial == partials[-1] == {"attempt": 1, "text": final}
    assert len(sink.reports) == 1


async def test_a_retried_stream_starts_its_partial_output_over_beside_the_new_attempt(
    app: App, sink: ReportList, partials: list[JSON]
) -> None:
    words = "[fault:cut_off:first=1] " + " ".join(f"word{n}" for n in range(STREAM_WORDS))
    job = await run_job(app, {"model": "priced", "input": words, "stream": True})
    assert job.state is JobState.SUCCEEDED
    assert job.attempt == 2
    first, _ = await app.attempts(job.id)
    assert first.error is not None
    assert first.error.kind == "Retryable"
    assert first.error.message.startswith("StreamError (cut_off): the connection closed")
    # Each attempt begins with an empty text under its own number; none mixes the two.
    assert partials[0] == {"attempt": 1, "text": ""}
    restart = partials.index({"attempt": 2, "text": ""})
    assert all(isinstance(p, dict) and p["attempt"] == 1 for p in partials[:restart])
    assert all(isinstance(p, dict) and p["attempt"] == 2 for p in partials[restart:])
    assert job.partial == {"attempt": 2, "text": job.result["output_text"]}
    assert len(sink.reports) == 2


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"model": "priced"}, "invalid llm.respond input: input: Field required"),
        (
            {"model": "priced", "input": "hi", "temperature": 9},
            "invalid llm.respond input: temperature: Input should be less than or equal to 2",
        ),
        (["not", "an", "object"], "invalid llm.respond input: Input should be a valid dictionary"),
    ],
    ids=["missing-input", "temperature", "not-an-object"],
)
async def test_an_unusable_input_fails_at_once_without_a_call(
    app: App, sink: ReportList, payload: JSON, message: str
) -> None:
    job = await run_job(app, payload)
    assert job.state is JobState.FAILED
    assert job.attempt == 1
    assert job.error is not None
    assert job.error.kind == "Permanent"
    assert job.error.message.startswith(message)
    assert sink.reports == []


@pytest.mark.parametrize(
    ("payload", "field", "message"),
    [
        (
            {"model": "priced", "input": "hi", "provider": "elsewhere"},
            ("provider",),
            "unknown LLM provider 'elsewhere' (configured: mock, mock-chat)",
        ),
        (
            {"model": "gpt-4o", "input": "hi"},
            ("model",),
            "model 'gpt-4o' is not configured for LLM provider 'mock' (configured: priced, "
            "unpriced; set any_model = true on the provider to allow any)",
        ),
    ],
    ids=["unknown-provider", "unlisted-model"],
)
async def test_a_provider_or_model_not_configured_is_refused_at_submit_and_fails_a_stored_job(
    app: App, sink: ReportList, payload: JSON, field: tuple[str], message: str
) -> None:
    with pytest.raises(InputRefused) as refused:
        await app.submit("llm.respond", payload)
    assert (refused.value.field, refused.value.reason) == (field, message)
    # A job stored before the config changed fails at once, with the same reason.
    new = NewJob("llm.respond", payload, app.clock.now(), tenant="acme")
    stored = (await app.store.submit(new, app.clock.now())).job
    assert stored.lane is None
    await run_until_idle(app, WorkerConfig(poll_interval_ms=POLL_MS))
    job = await app.get(stored.id)
    assert job.state is JobState.FAILED
    assert job.attempt == 1
    assert job.error is not None
    assert job.error.kind == "Permanent"
    assert job.error.message == message
    assert sink.reports == []


async def test_a_refused_request_fails_at_once_and_is_reported(app: App, sink: ReportList) -> None:
    job = await run_job(app, {"model": "priced", "input": "[fault:400] please"})
    assert job.state is JobState.FAILED
    assert job.attempt == 1
    assert job.error is not None
    assert job.error.message.startswith("BadRequestError (HTTP 400)")
    (report,) = sink.reports
    assert (report.usage, report.lane_tokens, report.pause_until) == (None, None, None)
    # The provider answered: a refused request says nothing against its health.
    assert report.outcome is CallOutcome.ANSWERED


async def test_a_server_error_is_reported_as_a_failure_of_the_provider(
    app: App, sink: ReportList
) -> None:
    submitted = await app.submit(
        "llm.respond", {"model": "priced", "input": "[fault:503] down?"}, max_attempts=1
    )
    await run_until_idle(app, WorkerConfig(poll_interval_ms=POLL_MS))
    job = await app.get(submitted.job.id)
    assert (job.state, job.attempt) == (JobState.FAILED, 1)
    (report,) = sink.reports
    assert (report.outcome, report.lane_tokens) == (CallOutcome.FAILED, None)


async def test_a_rate_limited_call_pauses_its_lane_and_the_job_waits_without_an_attempt(
    app: App, sink: ReportList
) -> None:
    payload = {"model": "priced", "input": "[fault:429:first=1:retry-after-ms=40] busy?"}
    job = await run_job(app, payload)
    assert job.state is JobState.SUCCEEDED
    assert job.attempt == 1
    deferred, succeeded = await app.attempts(job.id)
    assert deferred.outcome is AttemptOutcome.DEFERRED
    assert deferred.error is not None
    assert deferred.error.kind == "RateLimited"
    assert succeeded.outcome is AttemptOutcome.SUCCEEDED
    refused, answered = sink.reports
    assert (refused.outcome, answered.outcome) == (CallOutcome.RATE_LIMITED, CallOutcome.ANSWERED)
    assert refused.usage is None
    assert refused.lane_tokens == 0
    assert refused.pause_until is not None
    assert refused.pause_until >= refused.sent_at + 40
    assert refused.rate_limits.requests.limit == MOCK_RPM
    assert answered.usage is not None
    assert answered.usage.attempt == 1
    assert answered.rate_limits != RateLimitSnapshot()
