"""Retention: how long finished jobs are kept, and the sweep that deletes older ones.

A `RetentionPolicy` keeps each final state for its own period (succeeded and cancelled
jobs a week, failed ones, which someone may still want to redrive, a month). Every
worker runs a `RetentionSweep` on its clock: at start and then every few minutes it
deletes, batch by batch, the jobs past their period with their attempts, events and
`ctx.once` records, and the worker registry's rows of workers not heard of for a day
(stopped or lost). Sweeps of many workers may overlap; each job is deleted once.
`backroom prune` runs the same deletion by hand (`prune_finished`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from backroom.clock import Clock
from backroom.core.errors import StoreError
from backroom.core.job import JobState
from backroom.store.protocol import AdminStore, WorkerRegistry

log = logging.getLogger("backroom.runtime.retention")

MINUTE_MS = 60_000
DAY_MS = 24 * 60 * MINUTE_MS


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """How long finished jobs are kept, by final state (None: forever), and how to sweep.

    A job is deleted once it finished longer ago than its state's period. The sweep
    runs every `sweep_every_ms` and deletes at most `batch` jobs per transaction.
    Workers stopped or lost for `workers_ms` leave the registry (None: never).
    """

    succeeded_ms: int | None = 7 * DAY_MS
    cancelled_ms: int | None = 7 * DAY_MS
    failed_ms: int | None = 30 * DAY_MS
    sweep_every_ms: int = 5 * MINUTE_MS
    batch: int = 1_000
    workers_ms: int | None = DAY_MS

    def __post_init__(self) -> None:
        periods = (self.succeeded_ms, self.cancelled_ms, self.failed_ms, self.workers_ms)
        if any(period is not None and period < 0 for period in periods):
            raise ValueError("retention periods must be >= 0 (or None: keep forever)")
        if self.sweep_every_ms < 1 or self.batch < 1:
            raise ValueError("sweep_every_ms and batch must be at least 1")

    def cutoffs(self, now: int) -> list[tuple[int, tuple[JobState, ...]]]:
        """(finished before, states) for each retention period in use, shortest first.

        States that share a period share one cutoff, so they are pruned together.
        """
        by_period: dict[int, list[JobState]] = {}
        for state, period in (
            (JobState.SUCCEEDED, self.succeeded_ms),
            (JobState.CANCELLED, self.cancelled_ms),
            (JobState.FAILED, self.failed_ms),
        ):
            if period is not None:
                by_period.setdefault(period, []).append(state)
        return [(now - period, tuple(by_period[period])) for period in sorted(by_period)]


async def prune_finished(
    store: AdminStore, older_than: int, states: Sequence[JobState], batch: int = 1_000
) -> int:
    """Delete every job in `states` that finished before `older_than`; how many.

    One transaction per `batch` jobs, so the store is never locked for long, until a
    batch comes back short: then nothing old enough is left (or another sweep holds it).
    """
    total = 0
    while True:
        deleted = await store.prune(older_than, states, batch)
        total += deleted
        if deleted < batch:
            return total


class RetentionStore(AdminStore, WorkerRegistry, Protocol):
    """What a sweep deletes from: finished jobs, and old rows of the worker registry."""


class RetentionSweep:
    """Applies a `RetentionPolicy` to a store, now and then every `sweep_every_ms`."""

    def __init__(self, store: RetentionStore, clock: Clock, policy: RetentionPolicy) -> None:
        self.store = store
        self.clock = clock
        self.policy = policy

    async def run(self) -> None:
        """Sweep at once, then every `sweep_every_ms`, until cancelled."""
        while True:
            await self.sweep()
            await self.clock.sleep(self.policy.sweep_every_ms)

    async def sweep(self) -> int:
        """Delete the jobs past their retention; how many. A store failure is logged
        and left for the next sweep."""
        deleted, now = 0, self.clock.now()
        for older_than, states in self.policy.cutoffs(now):
            try:
                deleted += await prune_finished(self.store, older_than, states, self.policy.batch)
            except StoreError as error:
                log.warning("retention sweep failed, will retry: %s", error)
        if deleted:
            log.info("retention: deleted %d finished jobs", deleted)
        if self.policy.workers_ms is not None:
            await self._prune_workers(now - self.policy.workers_ms)
        return deleted

    async def _prune_workers(self, older_than: int) -> None:
        try:
            gone = await self.store.prune_workers(older_than)
        except StoreError as error:
            log.warning("retention sweep of workers failed, will retry: %s", error)
            return
        if gone:
            log.info("retention: forgot %d stopped or lost workers", gone)
