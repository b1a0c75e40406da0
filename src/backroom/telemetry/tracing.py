"""OpenTelemetry traces of attempts and LLM calls, when the SDK is installed.

A submission's W3C `traceparent` header is stored on its job; each attempt is a span
(`backroom.attempt TASK`, kind CONSUMER) continuing that trace, and each LLM call it
makes a child span (`chat MODEL`, kind CLIENT) with the GenAI semantic conventions'
attributes: `gen_ai.system`, `gen_ai.request.model`, `gen_ai.usage.input_tokens` and
`gen_ai.usage.output_tokens`. Span times are the worker's clock's.

Without the optional extra (`pip install 'backroom[otel]'`) nothing is recorded; with
it, `configure_from_environment` installs a tracer provider that exports as the
standard `OTEL_*` variables say, and `Tracing` may also be handed a provider (tests
hand it one with an in-memory exporter).

The API is imported when first needed (~14 ms of CPU at a worker's start otherwise): a
provider was handed over or installed (installing one imports it), or a job carries a
trace to continue. Until something has imported it, none can be installed.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from backroom.core.job import Job
from backroom.core.outcome import Outcome
from backroom.core.usage import AttemptUsage
from backroom.telemetry.process_metrics import error_class, outcome_name

if TYPE_CHECKING:
    from types import ModuleType

    from opentelemetry.trace import Span, Tracer, TracerProvider


@functools.cache
def _trace_api() -> ModuleType | None:
    """OpenTelemetry's trace API, imported on first use; None without the extra."""
    try:
        from opentelemetry import trace  # noqa: PLC0415
    except ImportError:  # the optional extra is not installed: traces are a no-op
        return None
    return trace


def _provider_may_be_set() -> bool:
    """Whether a tracer provider may have been installed: only by importing the API
    (`set_tracer_provider`, an auto-instrumentation) or by naming one in the
    environment, which the API reads when first asked."""
    return _NAMED_PROVIDER or "opentelemetry.trace" in sys.modules


_NAMED_PROVIDER = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ


# Version 00 of W3C Trace Context: version, trace id, parent id, flags; all-zero ids
# and version ff are invalid.
_TRACEPARENT = re.compile(
    r"^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$"
)
_NS_PER_MS = 1_000_000


def valid_traceparent(value: str | None) -> str | None:
    """`value` if it is a valid W3C `traceparent`, else None (a new trace then begins).

    >>> valid_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    >>> valid_traceparent("00-00000000000000000000000000000000-b7ad6b7169203331-01") is None
    True
    """
    if value is None:
        return None
    value = value.strip()
    return value if _TRACEPARENT.match(value) else None


class AttemptSpan:
    """The span of one running attempt (or nothing, without tracing): its outcome."""

    def __init__(self, span: Span | None) -> None:
        self._span = span

    def ended(self, outcome: Outcome | None) -> None:
        """Record how the attempt ended (None: its lease was lost)."""
        span = self._span
        if span is None:  # untraced: no need of the API (importing it would trace on)
            return
        otel_trace = _trace_api()
        if otel_trace is None:
            return
        ended = "lease_lost" if outcome is None else outcome_name(outcome)
        span.set_attribute("backroom.outcome", ended)
        kind = "" if outcome is None else error_class(outcome)
        if kind:
            span.set_attribute("error.type", kind)
            span.set_status(otel_trace.Status(otel_trace.StatusCode.ERROR, kind))


_NO_SPAN = AttemptSpan(None)


class _Untraced(AbstractContextManager[AttemptSpan]):
    """The context of an attempt that has no span: nothing to enter or end (a generator
    context per attempt cost ~2 us for nothing)."""

    def __enter__(self) -> AttemptSpan:
        return _NO_SPAN

    def __exit__(self, *_exc: object) -> None:
        return None


_UNTRACED = _Untraced()


class Tracing:
    """Spans of attempts and LLM calls through `provider` (the global one by default)."""

    def __init__(self, provider: TracerProvider | None = None) -> None:
        self._provider = provider

    def _untraced(self, job: Job) -> bool:
        """True when an attempt's span would be an invalid no-op: no provider installed
        (the API's proxy answers) and no trace to continue."""
        if self._provider is None and not job.traceparent and not _provider_may_be_set():
            return True
        otel_trace = _trace_api()
        if otel_trace is None or self._provider is not None or job.traceparent:
            return otel_trace is None
        return isinstance(otel_trace.get_tracer_provider(), otel_trace.ProxyTracerProvider)

    def _tracer(self) -> Tracer | None:
        if self._provider is None and not _provider_may_be_set():
            return None
        otel_trace = _trace_api()
        if otel_trace is None:
            return None
        provider = self._provider or otel_trace.get_tracer_provider()
        tracer: Tracer = provider.get_tracer("backroom")
        return tracer

    def attempt(
        self, job: Job, started_ms: int, now: Callable[[], int]
    ) -> AbstractContextManager[AttemptSpan]:
        """The span of an attempt of `job` (as claimed), current while it runs; `now()`
        gives its end (ms)."""
        tracer = None if self._untraced(job) else self._tracer()
        if tracer is None:
            return _UNTRACED
        return self._traced(tracer, job, started_ms, now)

    @contextmanager
    def _traced(
        self, tracer: Tracer, job: Job, started_ms: int, now: Callable[[], int]
    ) -> Iterator[AttemptSpan]:
        from opentelemetry.trace.propagation.tracecontext import (  # noqa: PLC0415
            TraceContextTextMapPropagator,
        )

        otel_trace = _trace_api()
        assert otel_trace is not None  # a tracer was found
        carrier = {"traceparent": job.traceparent} if job.traceparent else {}
        span = tracer.start_span(
            f"backroom.attempt {job.task}",
            context=TraceContextTextMapPropagator().extract(carrier),
            kind=otel_trace.SpanKind.CONSUMER,
            start_time=started_ms * _NS_PER_MS,
            attributes=_job_attributes(job),
        )
        try:
            with otel_trace.use_span(span, end_on_exit=False):
                yield AttemptSpan(span)
        finally:
            span.end(end_time=now() * _NS_PER_MS)

    def llm_call(
        self, lane: str, sent_at: int, ended_at: int, usage: AttemptUsage | None, refused: bool
    ) -> None:
        """A child span of the current attempt's for one provider call of `lane`."""
        tracer = self._tracer()
        otel_trace = _trace_api() if tracer is not None else None
        if tracer is None or otel_trace is None:
            return
        system, _, model = lane.partition("/")
        attributes: dict[str, str | int] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": system,
            "gen_ai.request.model": model,
        }
        if usage is not None:
            attributes["gen_ai.usage.input_tokens"] = usage.input_tokens
            attributes["gen_ai.usage.output_tokens"] = usage.output_tokens
        span = tracer.start_span(
            f"chat {model}",
            kind=otel_trace.SpanKind.CLIENT,
            start_time=sent_at * _NS_PER_MS,
            attributes=attributes,
        )
        if refused:
            span.set_attribute("error.type", "429")
            span.set_status(otel_trace.Status(otel_trace.StatusCode.ERROR, "rate limited"))
        span.end(end_time=ended_at * _NS_PER_MS)


def _job_attributes(job: Job) -> dict[str, str | int]:
    return {
        "messaging.system": "backroom",
        "messaging.operation.type": "process",
        "messaging.destination.name": job.queue,
        "messaging.message.id": str(job.id),
        "backroom.job.id": job.id,
        "backroom.task": job.task,
        "backroom.tenant": job.tenant,
        "backroom.attempt": job.attempt,
    }
