"""The `llm.respond` task: one LLM call per attempt, its usage and cost reported.

    respond = register_llm_tasks(app, load_llm_config(path, os.environ))
    ...
    await respond.aclose()  # when the worker stops: closes the SDK clients

Input `{model, input, instructions?, max_output_tokens?, temperature?, prompt_version?,
provider?, stream?, max_cost_usd?}` and the request features (see `RespondInput`);
result `{output_text, status, finish_reason, incomplete_details, response_id, model,
usage: {input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost_usd,
estimated}}` and, with the features, `output_parsed` and `tool_calls` (see
`backroom.llm.result`), with `cost_usd` an exact decimal string, or null when the model
has no prices; `estimated` is true when the provider reported no usage and the counts
are backroom's estimate. With `stream`, the text so far is stored as the job's partial
output about every 250 ms, beside the attempt that streams it (`{"attempt": N, "text":
...}`, reset as each attempt starts).

Every call is recorded before it is sent, its worst-case cost reserved under the
tenant's budget and the job's `max_cost_usd`, and settled with its usage after
(`backroom.llm.spend`). After every call that reached the provider, the handler tells
a `CallSink` what it used and what the provider said about its limits: the seam
through which lanes learn from responses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Protocol

from backroom.app import App
from backroom.clock import Clock, SystemClock
from backroom.context import JobContext
from backroom.core.errors import JobError, Offloaded, Permanent
from backroom.core.job import JSON, Job
from backroom.core.lane_health import CallOutcome
from backroom.core.lane_routes import LaneRoute
from backroom.core.lanes import LaneRequest
from backroom.core.retry import Jitter, RetryPolicy
from backroom.core.usage import AttemptUsage
from backroom.llm.admission import check_respond_input
from backroom.llm.batch.config import batch_settings
from backroom.llm.batch.offload import BatchOffload
from backroom.llm.config import LLMConfig
from backroom.llm.lanes import charged_output, lane_request_for_payload, lane_tokens
from backroom.llm.progress import DeltaCallback, partial_output
from backroom.llm.provider import RateLimited, Resume
from backroom.llm.providers.registry import HttpClientFactory, Providers
from backroom.llm.ratelimit_headers import RateLimitSnapshot
from backroom.llm.result import check_truncation, result_json
from backroom.llm.routes import Route, lane_route_for_payload, route_for_lane
from backroom.llm.spend import SpendLedger
from backroom.llm.task_input import RespondInput
from backroom.llm.usage_sink import StoreCallSink
from backroom.store.protocol import Store
from backroom.tasks import Submitter, Task

RESPOND_TASK = "llm.respond"
DEFAULT_CALL_TIMEOUT_S = 600.0
"""How long one HTTP exchange with a provider may take: the SDK's own default."""
RESPOND_RETRY = RetryPolicy(max_attempts=8, base_ms=4_000, cap_ms=180_000, jitter=Jitter.EQUAL)
"""`llm.respond`'s retries, sized for a provider incident rather than a blip: waits of
2-4 s, 4-8 s ... up to 90-180 s, about 4 to 7 minutes over 8 attempts. A 429 uses
none of them (its job waits for the lane), and the lane's breaker keeps a failing
provider from being hammered meanwhile."""


@dataclass(frozen=True, slots=True)
class CallReport:
    """How one provider call of a job went, for usage records and the job's lane.

    `usage` is None when the call failed (providers report no usage then).
    `lane_tokens` is what the provider counted against the lane's tokens per minute:
    input plus output for an answered call, 0 for a 429 (the provider refused it),
    None when unknown (a timeout or a server error: keep the estimate charged).
    `pause_until` is set by a 429 with Retry-After: the whole lane waits until then.
    `outcome` tells the lane's backoff and breaker how the call ended.
    """

    job: Job
    lane: str
    sent_at: int
    usage: AttemptUsage | None
    lane_tokens: int | None
    rate_limits: RateLimitSnapshot
    pause_until: int | None = None
    outcome: CallOutcome = CallOutcome.ANSWERED


class CallSink(Protocol):
    """Where the `llm.respond` handler reports each call that reached the provider.

    Called once per such call, from the handler, before it returns or raises. An
    implementation stores `report.usage` against the job's tenant (keyed by job and
    attempt, so a repeat is harmless) and settles the job's lane grant with
    `report.lane_tokens`, `report.rate_limits` and `report.pause_until`. If it raises,
    the attempt fails with that error, and a retry makes a second, paid call.
    """

    async def call_ended(self, report: CallReport) -> None:
        """Record one call's usage and what it taught about its lane."""


def _failure_report(job: Job, lane: str, sent_at: int, error: JobError, now: int) -> CallReport:
    if isinstance(error, RateLimited):
        pause_until = None if error.after_ms is None else now + error.after_ms
        limited = CallOutcome.RATE_LIMITED
        return CallReport(job, lane, sent_at, None, 0, error.rate_limits, pause_until, limited)
    # A refusal of the request itself shows the provider up; anything else may be it failing.
    outcome = CallOutcome.ANSWERED if isinstance(error, Permanent) else CallOutcome.FAILED
    return CallReport(job, lane, sent_at, None, None, RateLimitSnapshot(), outcome=outcome)


def _partial_output(ctx: JobContext) -> DeltaCallback:
    async def store_partial(text: str) -> None:
        await ctx.progress(partial=partial_output(ctx.attempt, text))

    return store_partial


class RespondTask:
    """The `llm.respond` handler, with the config, SDK clients and sink it uses."""

    def __init__(
        self,
        config: LLMConfig,
        sink: CallSink,
        ledger: SpendLedger,
        *,
        call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
        http_clients: Mapping[str, HttpClientFactory] | None = None,
        retry: RetryPolicy = RESPOND_RETRY,
        clock: Clock | None = None,
        batch_store: Callable[[], Store] | None = None,
    ) -> None:
        clock = clock or SystemClock()
        self._config = config
        self._sink = sink
        self._retry = retry
        self._ledger = ledger
        self._providers = Providers(call_timeout_s, http_clients)
        self.offload = None if batch_store is None else BatchOffload(
            config, batch_settings(config.batch), batch_store, self._providers, clock, retry
        )  # fmt: skip
        """Batch offload, with a store: its loop runs in every worker (`register_llm_tasks`)."""

    def task(self) -> Task:
        """The task to register on an app, its jobs in the lanes of their models.

        No task timeout: the SDK's per-exchange timeout ends a hung call, and a
        stream that keeps sending may take as long as it needs.
        """
        return Task(
            RESPOND_TASK,
            self.handle,
            lane_request=self.lane_request,
            check_input=self.check_input,
            lane_route=self.lane_route,
            retry=self._retry,
            gate_free=self.gate_free,
        )

    def gate_free(self, job: Job) -> bool:
        """Whether `job`'s attempt goes to a provider batch: it passes no lane gate then
        (the handler decides the same way, and reserves its budget)."""
        if self.offload is None:
            return False
        try:
            job_input = RespondInput.parse(job.input)
            route = route_for_lane(job_input, self._config, job.lane)
        except JobError:
            return False  # the handler fails the job
        return self.offload.offloads(job, job_input, route.provider, route.lane)

    def lane_route(self, payload: JSON) -> LaneRoute | None:
        """The lanes a job with fallbacks may run in, in order; None without them."""
        return lane_route_for_payload(payload, self._config)

    def check_input(self, payload: JSON, submitter: Submitter) -> None:
        """Refuse at submit (`InputRefused`) a provider or model the config rules out,
        or one without prices for a capped submitter (see `backroom.llm.admission`)."""
        check_respond_input(payload, submitter, self._config)

    def lane_request(self, payload: JSON) -> LaneRequest | None:
        """The lane a job with input `payload` runs in, or None if the input is unusable."""
        return lane_request_for_payload(payload, self._config)

    async def aclose(self) -> None:
        """Close the providers' SDK clients."""
        await self._providers.aclose()

    async def handle(self, ctx: JobContext, payload: JSON) -> JSON:
        """Make the call `payload` asks for; `Permanent` if it is invalid."""
        job_input = RespondInput.parse(payload)
        # The job's current lane: its own (provider, model), or a fallback it moved to.
        route = route_for_lane(job_input, self._config, ctx.job.lane)
        provider, model, lane = route.provider, route.model, route.lane
        clock = ctx.clock
        if job_input.stream:  # a retry streams anew: drop an earlier attempt's text
            await ctx.progress(0.0, partial=partial_output(ctx.attempt, ""))
        asked = replace(job_input.request(), model=model.name)
        if self.offload is not None and self.offload.offloads(ctx.job, job_input, provider, lane):
            await self._hand_off(self.offload, ctx, job_input, route)
        call = await self._ledger.open(ctx.job, job_input, provider, model, asked, clock.now())
        request = call.request
        sent_at = clock.now()
        sender = self._providers.get(provider)
        try:
            result = await sender.respond(
                request,
                clock=clock,
                on_delta=_partial_output(ctx) if request.stream else None,
                resume=Resume(partial(self._ledger.created, call), call.resume_id),
            )
        except JobError as error:
            answered = error.__cause__ is not None and sender.answered(error.__cause__)
            await self._ledger.failed(call, error, clock.now(), answered=answered)
            await self._sink.call_ended(_failure_report(ctx.job, lane, sent_at, error, clock.now()))
            raise
        usage = await self._ledger.answered(call, result, clock.now())
        charged = lane_tokens(result.usage, charged_output(request, model.limits))
        await self._sink.call_ended(
            CallReport(ctx.job, lane, sent_at, usage, charged, result.rate_limits)
        )
        if request.stream:
            # The last deltas arrive with the end of the stream: leave the whole text, not
            # the prefix of the last 250 ms tick, for pollers to see.
            await ctx.progress(1.0, partial=partial_output(ctx.attempt, result.output_text))
        check_truncation(result, fail_on_truncation=job_input.fail_on_truncation)
        return result_json(result, usage, request)

    async def _hand_off(
        self, offload: BatchOffload, ctx: JobContext, job_input: RespondInput, route: Route
    ) -> None:
        """Reserve the call's budget and hand the job to its lane's next provider batch."""
        asked = replace(job_input.request(), model=route.model.name, stream=False)
        job, provider, now = ctx.job, route.provider, ctx.clock.now()
        call, budget = await self._ledger.prepare(job, job_input, provider, route.model, asked, now)
        await offload.hand_off(job, route.lane, provider.name, call, budget)
        raise Offloaded(f"job {job.id} waits in a provider batch of lane {route.lane}")


def register_llm_tasks(
    app: App,
    config: LLMConfig,
    sink: CallSink | None = None,
    *,
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    http_clients: Mapping[str, HttpClientFactory] | None = None,
    retry: RetryPolicy = RESPOND_RETRY,
) -> RespondTask:
    """Register `llm.respond` on `app`; close the returned task's clients when done.

    Each call is recorded in the app's store before it is sent and settled after (see
    `backroom.llm.spend`), and reported to `sink`, by default a `StoreCallSink`: lane
    settlements go to the app's store. `http_clients` gives providers, by name, an HTTP
    client of their own (see `backroom.llm.mock.offline`). `retry` replaces the
    default policy for provider incidents (`RESPOND_RETRY`: minutes, not seconds).
    """
    chosen = StoreCallSink(app) if sink is None else sink
    respond_task = RespondTask(
        config,
        chosen,
        SpendLedger(lambda: app.store),
        call_timeout_s=call_timeout_s,
        http_clients=http_clients,
        retry=retry,
        clock=app.clock,
        batch_store=lambda: app.store,
    )
    app.tasks.add(respond_task.task())
    if respond_task.offload is not None:
        app.tasks.services.append(respond_task.offload.run)
    app.close_with(respond_task.aclose)
    return respond_task
