"""Queue health in the Prometheus text format (`GET /metrics`), from `Store.stats`.

A fresh registry per scrape (no process-wide globals): the numbers come from the
store, so every server process reports the same, whole picture.
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Gauge, generate_latest

from backroom.service.context import AppParts
from backroom.store import QueueStats
from backroom.store.records import TaskBacklog

METRICS_MEDIA_TYPE = CONTENT_TYPE_LATEST
"""The media type of what `exposition` renders."""

_STATES = ("queued", "running", "succeeded", "failed", "cancelled")


def render_metrics(stats: list[QueueStats], backlog: list[TaskBacklog]) -> bytes:
    """The Prometheus exposition of per-queue counts, oldest-job age and failure rate,
    and of each task's queued jobs (a job whose task no worker has stays queued)."""
    registry = CollectorRegistry()
    _task_backlog(registry, backlog)
    jobs = Gauge("backroom_jobs", "Jobs by queue and state.", ["queue", "state"], registry=registry)
    oldest = Gauge(
        "backroom_oldest_queued_job_age_seconds",
        "Age of the oldest due queued job: how long a customer has waited.",
        ["queue"],
        registry=registry,
    )
    failure_rate = Gauge(
        "backroom_recent_failure_ratio",
        "Share of the jobs finished in the last hour that failed.",
        ["queue"],
        registry=registry,
    )
    for entry in stats:
        if entry.queue is None:
            continue  # the all-queues total: Prometheus sums the labelled series itself
        for state in _STATES:
            jobs.labels(entry.queue, state).set(getattr(entry, state))
        oldest.labels(entry.queue).set((entry.oldest_queued_age_ms or 0) / 1000)
        failure_rate.labels(entry.queue).set(entry.failure_rate)
    return generate_latest(registry)


def _task_backlog(registry: CollectorRegistry, backlog: list[TaskBacklog]) -> None:
    queued = Gauge(
        "backroom_queued_jobs_by_task",
        "Queued jobs by task: a count that only grows names a task no worker runs.",
        ["task"],
        registry=registry,
    )
    oldest = Gauge(
        "backroom_oldest_queued_job_age_by_task_seconds",
        "Age of each task's oldest due queued job.",
        ["task"],
        registry=registry,
    )
    for entry in backlog:
        queued.labels(entry.task).set(entry.queued)
        oldest.labels(entry.task).set((entry.oldest_due_age_ms or 0) / 1000)


async def exposition(app: AppParts) -> bytes:
    """The Prometheus exposition of the store's queues and tasks as of now."""
    now = app.clock.now()
    return render_metrics(await app.store.stats(now), await app.store.queued_by_task(now))
