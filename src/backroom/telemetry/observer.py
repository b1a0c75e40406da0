"""`Telemetry`: the one object the worker and the LLM call sink report to."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from backroom.clock import Clock
from backroom.core.job import Job
from backroom.core.outcome import Outcome
from backroom.core.usage import AttemptUsage
from backroom.telemetry.job_log import log_attempt_end, log_pause, log_started
from backroom.telemetry.process_metrics import ProcessMetrics
from backroom.telemetry.tracing import AttemptSpan, Tracing

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider


@dataclass(frozen=True, slots=True)
class LlmCall:
    """One provider call of a job's attempt, as the LLM call sink reports it.

    `lane` is `provider/model`; `usage` is None when the provider answered no usage
    (an error, a 429). Times are ms since the epoch.
    """

    job: Job
    lane: str
    sent_at: int
    ended_at: int
    usage: AttemptUsage | None


class Telemetry:
    """Counters, log lines and spans of one process's attempts and LLM calls."""

    def __init__(
        self, process: str | None = None, tracer_provider: TracerProvider | None = None
    ) -> None:
        self.metrics = ProcessMetrics(process)
        self.tracing = Tracing(tracer_provider)

    def attempt(self, job: Job, clock: Clock) -> AbstractContextManager[AttemptSpan]:
        """An attempt of `job` (as claimed) runs inside the block: its wait counted and
        logged (now), its span current (tell the span how it `ended`)."""
        self.metrics.attempt_started(job)
        log_started(job)
        started = clock.now() if job.started_at is None else job.started_at
        return self.tracing.attempt(job, started, clock.now)

    def attempt_ended(self, job: Job, outcome: Outcome, now: int) -> None:
        """The end of an attempt of `job` (as claimed) was stored at `now`."""
        self.metrics.attempt_ended(job, outcome, now)
        log_attempt_end(job, outcome, now)

    def llm_call_ended(
        self, call: LlmCall, *, rate_limited: bool = False, until: int | None = None
    ) -> None:
        """A provider call ended: count its usage, or its 429 (`rate_limited`), and log
        the pause of its lane `until` then (ms), if the provider asked for one."""
        self.metrics.llm_call_ended(call.lane, call.usage, rate_limited)
        self.tracing.llm_call(call.lane, call.sent_at, call.ended_at, call.usage, rate_limited)
        if until is not None and until > call.ended_at:
            log_pause("lane", call.lane, True, by="provider", for_ms=until - call.ended_at)
