"""The claim order both Python-side claims share (SQLite re-sorts what it took; memory
picks by it): queue precedence, then priority, tenants' turns, due time and id."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Protocol, TypeVar


class Claimable(Protocol):
    """A queued job as the claim order reads it (a `Job`, or a store's row)."""

    @property
    def id(self) -> int:
        """The job's id."""

    @property
    def tenant(self) -> str:
        """The job's tenant."""

    @property
    def priority(self) -> int:
        """The job's priority: higher first."""

    @property
    def run_at(self) -> int:
        """When the job is due."""


C = TypeVar("C", bound=Claimable)


def queue_precedence(queues: Iterable[str]) -> list[str]:
    """Queues in the order a claim of every queue serves them: `interactive` first,
    `batch` last, the rest by name in between."""
    return sorted(queues, key=lambda queue: (queue != "interactive", queue == "batch", queue))


def in_claim_order(jobs: Iterable[C]) -> list[C]:
    """Jobs of one queue in claim order: priority (highest first), then the tenants'
    turns within a priority (each tenant's first job, then each one's second...), then
    due time, then id."""
    turns: Counter[tuple[str, int]] = Counter()
    ranked: list[tuple[int, int, int, int, C]] = []
    for job in sorted(jobs, key=lambda job: (job.run_at, job.id)):
        turns[job.tenant, job.priority] += 1
        ranked.append((-job.priority, turns[job.tenant, job.priority], job.run_at, job.id, job))
    ranked.sort(key=lambda entry: entry[:4])
    return [entry[-1] for entry in ranked]
