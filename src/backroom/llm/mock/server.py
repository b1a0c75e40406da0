"""`backroom mock-llm`: an OpenAI- and Anthropic-compatible server for tests, examples
and benchmarks.

`POST /v1/responses`, `POST /v1/chat/completions` and Anthropic's `POST /v1/messages`
(its errors, `anthropic-ratelimit-*` headers and SSE events in Anthropic's shape, see
`mock.anthropic_shape`; its prompt-cache reads and writes in its usage), streamed or
not, answer with
deterministic text (see `mock_reply`) and real usage counts. When limits are set,
every answer to a well-formed request carries `x-ratelimit-*` headers, and a call
past a limit gets a real 429 with Retry-After (see `mock_limits`). Directives in the
prompt script failures (see `mock_faults`). A Responses API call with `background: true`
is answered at once, queued, and `GET /v1/responses/{id}` shows it in progress until
the latency has passed, then done (see `mock.background`). The Files and Batches APIs
run batches of `/v1/responses` lines (see `mock.batch_jobs`). A request that was answered before is
answered again with all its input tokens counted as cached, as a prompt cache would.

All time (latency, stream pacing, rate limits) comes from the injected `Clock`, and
all state lives in the app that `create_mock_app` returns.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from backroom.clock import Clock, SystemClock
from backroom.llm.mock.anthropic_shape import as_anthropic
from backroom.llm.mock.background import BackgroundResponses
from backroom.llm.mock.batch_jobs import BatchMockConfig, MockBatchApi
from backroom.llm.mock.batches import install_batch_routes
from backroom.llm.mock.broken import PLAIN_CALL_BREAKS, STREAM_FAULTS, CuttableResponse, broken_body
from backroom.llm.mock.charge import ChargeAt, TokenCharge
from backroom.llm.mock.chat import completion_body, completion_chunks
from backroom.llm.mock.errors import error_response
from backroom.llm.mock.faults import Fault, FaultCounter, fault_response, find_fault
from backroom.llm.mock.limits import ModelLimiter, refusal_response
from backroom.llm.mock.message_batches import (
    MessageBatches,
    errored,
    line_fault,
    mount_message_batches,
)
from backroom.llm.mock.messages import message_body, message_events
from backroom.llm.mock.prompt import (
    Prompt,
    prompt_from_chat,
    prompt_from_messages,
    prompt_from_responses,
)
from backroom.llm.mock.reply import Pause, Reply, compose_reply, prompt_key
from backroom.llm.mock.responses import response_body, response_events


@dataclass(frozen=True, slots=True)
class MockConfig:
    """How the mock behaves; a limit of None means no limit."""

    latency_ms: int = 0
    """Wait before each answer (before the first byte of a stream)."""
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    stream_interval_ms: int = 0
    """Wait between two streamed deltas."""
    charge_at: ChargeAt = ChargeAt.USAGE
    """When a call's tokens count against the tokens per minute (see `mock_limits`)."""
    batch_delay_ms: int = 0
    """How long an Anthropic Message Batch takes, its lines finishing one by one."""
    batch_expiry_ms: int | None = None
    """When a Message Batch expires, its lines not done by then unfinished (None: never)."""
    batches: BatchMockConfig = field(default_factory=BatchMockConfig)
    """How both batch APIs' batches complete (see `mock.batch_jobs`); left at its
    default, `batch_delay_ms` and `batch_expiry_ms` say."""

    def batch_timing(self) -> BatchMockConfig:
        """When batches of either API complete: `batches`, or else the delay and expiry."""
        if self.batches != BatchMockConfig():
            return self.batches
        return BatchMockConfig(self.batch_delay_ms, self.batch_expiry_ms)

    def __post_init__(self) -> None:
        if min(self.latency_ms, self.stream_interval_ms, self.batch_delay_ms) < 0:
            raise ValueError(
                "latency_ms, stream_interval_ms and batch_delay_ms must not be negative"
            )
        limits = (self.requests_per_minute, self.tokens_per_minute)
        if any(limit is not None and limit < 1 for limit in limits):
            raise ValueError("requests_per_minute and tokens_per_minute must be at least 1")


@dataclass(frozen=True, slots=True)
class _Endpoint:
    """How one API reads a request and writes an answer."""

    parse: Callable[[object], Prompt]
    body: Callable[[Reply], dict[str, Any]]
    stream: Callable[[Prompt, Reply, Pause, str | None], AsyncIterator[str]]
    """The SSE frames of an answer, broken by a stream fault if one is named."""
    reshape: Callable[[Response, int], Response] | None = None
    """Turns an answer in OpenAI's shape into this API's (errors, headers), given now."""


def _response_stream(
    _prompt: Prompt, reply: Reply, pause: Pause, fault: str | None
) -> AsyncIterator[str]:
    return response_events(reply, pause, fault=fault)


def _chat_stream(
    prompt: Prompt, reply: Reply, pause: Pause, fault: str | None
) -> AsyncIterator[str]:
    return completion_chunks(reply, pause, fault=fault, include_usage=prompt.stream_usage)


def _message_stream(
    _prompt: Prompt, reply: Reply, pause: Pause, fault: str | None
) -> AsyncIterator[str]:
    return message_events(reply, pause, fault=fault)


_RESPONSES = _Endpoint(prompt_from_responses, response_body, _response_stream)
_CHAT = _Endpoint(prompt_from_chat, completion_body, _chat_stream)
_MESSAGES = _Endpoint(prompt_from_messages, message_body, _message_stream, as_anthropic)


@dataclass(frozen=True, slots=True)
class _Call:
    """One admitted call on its way to an answer."""

    request: Request
    endpoint: _Endpoint
    prompt: Prompt
    reply: Reply
    headers: dict[str, str]
    """The rate-limit headers every answer carries."""
    limiter: ModelLimiter
    charge: TokenCharge


async def _until_disconnected(request: Request) -> None:
    """Wait until the client closes the connection (the body is already read)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


class _MockProvider:
    """The mock's state: rate limits per model, fault counts and answered requests."""

    def __init__(self, config: MockConfig, clock: Clock) -> None:
        self._config = config
        self._clock = clock
        self._limiters: dict[str, ModelLimiter] = {}
        self._faults = FaultCounter()
        self._answered: set[str] = set()
        self._replies = 0
        self.background = BackgroundResponses(clock, config.latency_ms)
        timing = config.batch_timing()
        self.batches = MessageBatches(
            clock,
            self.answer_line,
            delay_ms=timing.delay_ms,
            expiry_ms=timing.expire_ms,
            create_delay_ms=timing.create_delay_ms,
        )

    def _limiter(self, model: str, now: int) -> ModelLimiter:
        if model not in self._limiters:
            config = self._config
            self._limiters[model] = ModelLimiter(
                config.requests_per_minute, config.tokens_per_minute, now, config.charge_at
            )
        return self._limiters[model]

    async def _pause(self) -> None:
        if self._config.stream_interval_ms:
            await self._clock.sleep(self._config.stream_interval_ms)

    async def handle(self, request: Request, endpoint: _Endpoint) -> Response:
        """Answer one call: refuse it, fail it as scripted, or reply (in its API's shape)."""
        response = await self._handle(request, endpoint)
        if endpoint.reshape is None:
            return response
        return endpoint.reshape(response, self._clock.now())

    async def _handle(self, request: Request, endpoint: _Endpoint) -> Response:
        try:
            prompt = endpoint.parse(await request.json())
            fault = find_fault(prompt.text)
        except ValueError as error:  # bad JSON, a malformed body or fault directive
            return error_response(400, f"Invalid request: {error}")
        now = self._clock.now()
        key = prompt_key(prompt)
        self._replies += 1
        reply = compose_reply(
            prompt, number=self._replies, created_s=now // 1000, cached=key in self._answered
        )
        limiter = self._limiter(prompt.model, now)
        usage = reply.usage
        charge = TokenCharge(usage.input_tokens, usage.output_tokens, prompt.max_output_tokens)
        refusal = limiter.admit(charge.at_admission(limiter.charge_at), now)
        call = _Call(request, endpoint, prompt, reply, limiter.headers(), limiter, charge)
        if refusal is not None:
            return refusal_response(prompt.model, refusal, call.headers)
        if fault is not None and fault.applies_to(prompt.model) and self._faults.fires(fault, key):
            return await self._fail(call, fault)
        self._answered.add(key)
        if prompt.background:
            return self.background.create(reply, call.headers)
        return await self._answer(call)

    def answer_line(self, params: object) -> dict[str, Any]:
        """A Message Batch line's result: answered as `/v1/messages` would answer its
        params (no rate limit), or failed as its fault directive says."""
        try:
            prompt = prompt_from_messages(params)
        except ValueError as error:
            return errored(400, f"Invalid request: {error}")
        key = prompt_key(prompt)
        failed = line_fault(
            prompt.text,
            lambda fault: fault.applies_to(prompt.model) and self._faults.fires(fault, key),
        )
        if failed is not None:
            return failed
        self._replies += 1
        now_s = self._clock.now() // 1000
        reply = compose_reply(
            prompt, number=self._replies, created_s=now_s, cached=key in self._answered
        )
        self._answered.add(key)
        return {"type": "succeeded", "message": message_body(reply)}

    async def _fail(self, call: _Call, fault: Fault) -> Response:
        if fault.name == "timeout":
            await _until_disconnected(call.request)
            return Response(status_code=499)  # never seen: the client has gone
        if fault.name in STREAM_FAULTS and call.prompt.stream:
            return await self._answer(call, fault.name)
        if fault.name in PLAIN_CALL_BREAKS:
            return broken_body(fault.name, call.endpoint.body(call.reply))
        if fault.name == "no_usage":
            silent = replace(call.reply, reports_usage=False)
            return await self._answer(replace(call, reply=silent))
        return fault_response(fault, now=self._clock.now(), headers=call.headers)

    async def _answer(self, call: _Call, fault: str | None = None) -> Response:
        if self._config.latency_ms:
            await self._clock.sleep(self._config.latency_ms)
        call.limiter.complete(call.charge, self._clock.now())
        if call.prompt.stream:
            events = call.endpoint.stream(call.prompt, call.reply, self._pause, fault)
            return CuttableResponse(events, media_type="text/event-stream", headers=call.headers)
        return JSONResponse(call.endpoint.body(call.reply), headers=call.headers)


def create_mock_app(config: MockConfig, clock: Clock) -> FastAPI:
    """A new mock server app; each app has its own limits, counters and cache."""
    provider = _MockProvider(config, clock)
    app = FastAPI(title="backroom mock LLM", docs_url=None, redoc_url=None)

    @app.post("/v1/responses")
    async def create_response(request: Request) -> Response:
        """The Responses API."""
        return await provider.handle(request, _RESPONSES)

    @app.get("/v1/responses/{response_id}")
    async def retrieve_response(response_id: str) -> Response:
        """A background response as it stands."""
        return provider.background.retrieve(response_id)

    @app.post("/v1/chat/completions")
    async def create_chat_completion(request: Request) -> Response:
        """Chat completions."""
        return await provider.handle(request, _CHAT)

    @app.post("/v1/messages")
    async def create_message(request: Request) -> Response:
        """Anthropic's Messages API."""
        return await provider.handle(request, _MESSAGES)

    mount_message_batches(app, provider.batches)

    install_batch_routes(app, MockBatchApi(config.batch_timing(), clock))

    return app


def serve_mock(config: MockConfig, host: str, port: int) -> None:
    """Serve a mock on `host:port` under uvicorn until interrupted, on the system clock."""
    # No access log: a benchmark sends thousands of requests.
    uvicorn.run(create_mock_app(config, SystemClock()), host=host, port=port, access_log=False)
