"""`GET /metrics` in the Prometheus text format: the store's picture and this process's counters.

Two kinds of numbers, so that many processes on many machines add up:

- what describes the queues (jobs by queue, tenant and state, the oldest queued job's
  age, failure ratios, backlogs by task, pauses, lanes, workers alive) is read from the
  store at scrape time by `StoreCollector`, a custom collector: every server reports
  the same, whole picture (take `max` across instances, never `sum`). The jobs are
  read in one pass (`job_counts`), the per-queue numbers added up from it;
- what this process did (attempts and their outcomes, waits and run times, 429s,
  tokens and cost, webhook deliveries) comes from its `ProcessMetrics`, every series
  labelled with its `process`: sum those across instances.

A fresh registry per scrape holds the collector (no process-wide globals).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from backroom.core.lanes import CREDIT_PER_UNIT
from backroom.core.workers import WorkerRecord, WorkerState
from backroom.service.context import AppParts
from backroom.store import QueueStats
from backroom.store.records import (
    JobCount,
    LaneStatus,
    Pause,
    PauseKind,
    TaskBacklog,
    queue_stats_of,
)
from backroom.telemetry.process_metrics import ProcessMetrics

METRICS_MEDIA_TYPE = CONTENT_TYPE_LATEST
"""The media type of what `exposition` renders."""

_STATES = ("queued", "running", "succeeded", "failed", "cancelled")


@dataclass(frozen=True, slots=True)
class StoreSnapshot:
    """What the store said at one scrape, as of `now` (ms)."""

    now: int
    counts: list[JobCount]
    backlog: list[TaskBacklog]
    lanes: list[LaneStatus]
    pauses: list[Pause]
    workers: list[WorkerRecord]

    @property
    def stats(self) -> list[QueueStats]:
        """Each queue's numbers, added up from `counts`."""
        return queue_stats_of(self.counts, self.now)


async def read_snapshot(app: AppParts) -> StoreSnapshot:
    """Read everything the store collector reports, now: the jobs in one pass."""
    store, now = app.store, app.clock.now()
    return StoreSnapshot(
        now,
        await store.job_counts(now),
        await store.queued_by_task(now),
        await store.lanes(now),
        await store.pauses(),
        await store.workers(),
    )


def _gauge(name: str, documentation: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, labels=labels)


class StoreCollector(Collector):
    """The queues, tasks and lanes as one `StoreSnapshot` shows them."""

    def __init__(self, snapshot: StoreSnapshot) -> None:
        self._snapshot = snapshot
        self._stats = snapshot.stats

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """Every gauge of the snapshot."""
        yield from self._queues()
        yield from self._tasks()
        yield from self._lanes()
        yield self._workers()

    def _queues(self) -> Iterator[GaugeMetricFamily]:
        snapshot = self._snapshot
        jobs = _gauge("backroom_jobs", "Jobs by queue and state.", ["queue", "state"])
        oldest = _gauge(
            "backroom_oldest_queued_job_age_seconds",
            "Age of the oldest due queued job: how long a customer has waited.",
            ["queue"],
        )
        failure_rate = _gauge(
            "backroom_recent_failure_ratio",
            "Share of the jobs finished in the last hour that failed.",
            ["queue"],
        )
        for entry in self._stats:
            if entry.queue is None:
                continue  # the all-queues total: Prometheus sums the labelled series itself
            for state in _STATES:
                jobs.add_metric([entry.queue, state], getattr(entry, state))
            oldest.add_metric([entry.queue], (entry.oldest_queued_age_ms or 0) / 1000)
            failure_rate.add_metric([entry.queue], entry.failure_rate)
        by_tenant = _gauge(
            "backroom_tenant_jobs",
            "Jobs by queue, tenant and state (a state with none is not listed).",
            ["queue", "tenant", "state"],
        )
        for count in snapshot.counts:
            by_tenant.add_metric([count.queue, count.tenant, str(count.state)], count.jobs)
        yield from (jobs, by_tenant, oldest, failure_rate, self._queue_pauses())

    def _queue_pauses(self) -> GaugeMetricFamily:
        snapshot = self._snapshot
        paused = _gauge(
            "backroom_queue_paused",
            "1 while a person has paused the queue for every worker, else 0.",
            ["queue"],
        )
        stopped = {pause.name for pause in snapshot.pauses if pause.kind is PauseKind.QUEUE}
        queues = {entry.queue for entry in self._stats if entry.queue is not None}
        for queue in sorted(queues | stopped):
            paused.add_metric([queue], 1 if queue in stopped else 0)
        return paused

    def _workers(self) -> GaugeMetricFamily:
        workers = _gauge(
            "backroom_workers",
            "Worker processes by state: alive (beating), lost (silent for 3 heartbeat "
            "intervals), stopped (shut down, kept a day).",
            ["state"],
        )
        states = [record.state(self._snapshot.now) for record in self._snapshot.workers]
        for state in WorkerState:
            workers.add_metric([str(state)], states.count(state))
        return workers

    def _tasks(self) -> Iterator[GaugeMetricFamily]:
        queued = _gauge(
            "backroom_queued_jobs_by_task",
            "Queued jobs by task: a count that only grows names a task no worker runs.",
            ["task"],
        )
        oldest = _gauge(
            "backroom_oldest_queued_job_age_by_task_seconds",
            "Age of each task's oldest due queued job.",
            ["task"],
        )
        for entry in self._snapshot.backlog:
            queued.add_metric([entry.task], entry.queued)
            oldest.add_metric([entry.task], (entry.oldest_due_age_ms or 0) / 1000)
        yield from (queued, oldest)

    def _lanes(self) -> Iterator[GaugeMetricFamily]:
        snapshot = self._snapshot
        families = {
            "in_flight": _gauge("backroom_lane_in_flight", "LLM calls running now.", ["lane"]),
            "max": _gauge(
                "backroom_lane_max_concurrency", "A lane's limit of calls at once.", ["lane"]
            ),
            "requests": _gauge(
                "backroom_lane_requests_left", "Requests the lane may start now.", ["lane"]
            ),
            "tokens": _gauge(
                "backroom_lane_tokens_left", "Tokens the lane may reserve now.", ["lane"]
            ),
            "throttled": _gauge(
                "backroom_lane_rate_limit_pause_seconds",
                "Seconds left of the pause a provider's 429 asked of the lane (0: none).",
                ["lane"],
            ),
            "paused": _gauge(
                "backroom_lane_paused",
                "1 while a person has paused the lane for every worker, else 0.",
                ["lane"],
            ),
        }
        stopped = {pause.name for pause in snapshot.pauses if pause.kind is PauseKind.LANE}
        for lane in snapshot.lanes:
            self._lane(families, lane, lane.name in stopped)
        for name in sorted(stopped - {lane.name for lane in snapshot.lanes}):
            families["paused"].add_metric([name], 1)  # paused before its first call
        yield from families.values()

    def _lane(self, families: dict[str, GaugeMetricFamily], lane: LaneStatus, paused: bool) -> None:
        limits, state, name = lane.limits, lane.state, [lane.name]
        families["in_flight"].add_metric(name, state.in_flight)
        if limits.max_concurrency is not None:
            families["max"].add_metric(name, limits.max_concurrency)
        if limits.requests_per_minute is not None:
            families["requests"].add_metric(name, state.request_credit // CREDIT_PER_UNIT)
        if limits.tokens_per_minute is not None:
            families["tokens"].add_metric(name, state.token_credit // CREDIT_PER_UNIT)
        pause_ms = max(0, state.paused_until - self._snapshot.now)
        families["throttled"].add_metric(name, pause_ms / 1000)
        families["paused"].add_metric(name, 1 if paused else 0)


def render_metrics(snapshot: StoreSnapshot, process: ProcessMetrics | None = None) -> bytes:
    """The exposition of `snapshot`, then of the process's own counters (if given)."""
    registry = CollectorRegistry()
    registry.register(StoreCollector(snapshot))
    text = generate_latest(registry)
    return text if process is None else text + process.exposition()


async def exposition(app: AppParts, process: ProcessMetrics | None = None) -> bytes:
    """The Prometheus exposition of the store as of now, and of `process`'s counters."""
    return render_metrics(await read_snapshot(app), process)
