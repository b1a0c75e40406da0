"""This process's own counters and histograms, in a registry of its own (no globals).

Every series carries a `process` label (`host:pid` by default), so the counters of
many workers and servers on many machines add up in Prometheus without one process's
restart or another's scrape target hiding any: sum them `by (task, outcome)`, say.
What describes the queues themselves (depths, ages, lanes) is read from the store at
scrape time instead (`backroom.service.metrics`), the same from whichever server.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING, Any

from backroom.core.job import Job
from backroom.core.outcome import Cancelled, Deferred, Failed, Outcome, Released, RetryAt
from backroom.core.usage import AttemptUsage
from backroom.core.webhooks import DELIVERY_TASK
from backroom.telemetry.tallies import Tally, TallyCollector

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

_WAIT_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600)
_RUN_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800)
_PICO_PER_USD = 10**12


def default_process_name() -> str:
    """`host:pid`: which process on which machine a series comes from."""
    return f"{socket.gethostname()}:{os.getpid()}"


_OUTCOME_NAMES: dict[type, str] = {
    RetryAt: "retried",
    Failed: "failed",
    Cancelled: "cancelled",
    Released: "released",
    Deferred: "deferred",
}


def outcome_name(outcome: Outcome) -> str:
    """How an attempt ended, as a label: succeeded, retried, failed, cancelled, released
    (handed back at shutdown) or deferred (its lane or budget had no room)."""
    return _OUTCOME_NAMES.get(type(outcome), "succeeded")


def error_class(outcome: Outcome) -> str:
    """The class of the error an attempt ended with ("" without one)."""
    error = getattr(outcome, "error", None)
    return "" if error is None else str(error.kind)


class ProcessMetrics:
    """The counters of attempts, LLM calls and webhook deliveries this process made.

    Kept as plain tallies (`backroom.telemetry.tallies`): prometheus_client is imported
    only when they are read (`registry`, `exposition`)."""

    def __init__(self, process: str | None = None) -> None:
        self.process = process or default_process_name()
        self._registry: CollectorRegistry | None = None
        self._children: dict[tuple[str, ...], Any] = {}
        self._declare_attempts()
        self._declare_llm()

    @property
    def registry(self) -> CollectorRegistry:
        """A Prometheus registry that reads these counters (made on first use)."""
        if self._registry is None:
            from prometheus_client import CollectorRegistry  # noqa: PLC0415

            registry = CollectorRegistry()
            registry.register(TallyCollector(self._tallies))
            self._registry = registry
        return self._registry

    def _declare_attempts(self) -> None:
        self._outcomes = Tally(
            "backroom_attempt_outcomes",
            "Attempts that ended, by task, outcome and error class.",
            ["process", "queue", "task", "outcome", "error_class"],
        )
        self._wait = Tally(
            "backroom_queue_wait_seconds",
            "How long a job waited between being due and its attempt starting.",
            ["process", "queue", "task"],
            buckets=_WAIT_BUCKETS,
        )
        self._run = Tally(
            "backroom_attempt_duration_seconds",
            "How long an attempt ran, from its claim to its stored end.",
            ["process", "queue", "task", "outcome"],
            buckets=_RUN_BUCKETS,
        )
        self._webhooks = Tally(
            "backroom_webhook_deliveries",
            "Webhook delivery attempts by outcome: delivered, retried or failed for good.",
            ["process", "outcome"],
        )

    def _declare_llm(self) -> None:
        self._rate_limited = Tally(
            "backroom_lane_rate_limited",
            "Provider answers of 429 Too Many Requests, by lane.",
            ["process", "lane"],
        )
        self._calls = Tally(
            "backroom_llm_calls",
            "LLM calls answered, by tenant and model.",
            ["process", "tenant", "model"],
        )
        self._tokens = Tally(
            "backroom_llm_tokens",
            "LLM tokens by tenant, model and kind (input includes cached input).",
            ["process", "tenant", "model", "kind"],
        )
        self._cost = Tally(
            "backroom_llm_cost_usd",
            "LLM spend in US dollars by tenant and model (models with prices only).",
            ["process", "tenant", "model"],
        )
        self._tallies = (
            self._outcomes,
            self._wait,
            self._run,
            self._webhooks,
            self._rate_limited,
            self._calls,
            self._tokens,
            self._cost,
        )

    def attempt_started(self, job: Job) -> None:
        """Count the wait of an attempt that just started (`job` as claimed)."""
        if job.started_at is None:
            return
        waited = max(0, job.started_at - job.run_at) / 1000
        self._child(self._wait, "wait", job.queue, job.task).observe(waited)

    def attempt_ended(self, job: Job, outcome: Outcome, now: int) -> None:
        """Count an attempt whose end was stored at `now` (`job` as claimed)."""
        name = outcome_name(outcome)
        labels = (job.queue, job.task, name)
        self._child(self._outcomes, "outcomes", *labels, error_class(outcome)).inc()
        if job.started_at is not None:
            self._child(self._run, "run", *labels).observe(max(0, now - job.started_at) / 1000)
        if job.task == DELIVERY_TASK and name in ("succeeded", "retried", "failed"):
            delivered = "delivered" if name == "succeeded" else name
            self._webhooks.counter(self.process, delivered).inc()

    def _child(self, metric: Any, name: str, *labels: str) -> Any:
        """`metric`'s series for this process and `labels`, looked up once (`labels()`
        builds a key on every call, twice an attempt)."""
        key = (name, *labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(self.process, *labels)
        return child

    def llm_call_ended(self, lane: str, usage: AttemptUsage | None, rate_limited: bool) -> None:
        """Count one provider call: its usage if answered, or a 429 of its lane."""
        if rate_limited:
            self._rate_limited.counter(self.process, lane).inc()
        if usage is None:
            return
        labels = (self.process, usage.tenant, usage.model)
        self._calls.counter(*labels).inc()
        for kind, tokens in (
            ("input", usage.input_tokens),
            ("cached", usage.cached_tokens),
            ("output", usage.output_tokens),
        ):
            self._tokens.counter(*labels, kind).inc(tokens)
        if usage.cost_pico_usd is not None:
            self._cost.counter(*labels).inc(usage.cost_pico_usd / _PICO_PER_USD)

    def exposition(self) -> bytes:
        """These counters in the Prometheus text format."""
        from prometheus_client import generate_latest  # noqa: PLC0415

        return generate_latest(self.registry)
