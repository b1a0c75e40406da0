"""The worker: claim due jobs, run them under a lease, store how each attempt ended.

One asyncio loop per process runs these side by side:

- the claim loop takes the free slots' worth of due jobs in one store call (a busy one
  lets `claim_floor` slots free first), starts each as a task and lets them begin before
  it sends anything more, then waits for a free slot, a new-work hint or the next poll;
- every attempt runs its handler under the task's timeout and turns what happened into
  an `Outcome` (core.retry decides retry or fail);
- the outcome writer (`runtime.outcome_writer`) stores finished attempts in batches;
- the heartbeat loop refreshes the worker's registry row (`runtime.presence`), extends
  every held lease in one call, stops handlers whose lease was lost or job cancelled;
- the retention sweep (`runtime.retention`) deletes old finished jobs now and then;
- on SQLite, the commit watch (`runtime.wakeup`) wakes it when another process commits.

A burst worker exits once nothing in its queues is queued or running. While other
workers still run jobs, it waits on them (one may fail and come back to the queue), and
the feed's hints of their ends wake it, so it leaves as soon as the last one is stored.

A slot frees when its handler returns, not when its outcome is stored: the next claim
goes to the store alongside the finish of the last jobs, and a group-committing store
(SQLite) writes both in one transaction. The worker owns the clock (the store only
receives `now`) and tells its `Telemetry` of every attempt."""

from __future__ import annotations

import asyncio
import logging
import random
import signal
from collections.abc import Awaitable
from typing import TypeVar

from backroom.clock import Clock, in_virtual_time, let_ready_tasks_run
from backroom.core.errors import Offloaded, StoreError
from backroom.core.retry import ErrorClassifier, RetryPolicy
from backroom.runtime.attempt import AttemptRunner, StopReason
from backroom.runtime.attempt_log import log_lease_lost
from backroom.runtime.claim_batch import SlotGathering
from backroom.runtime.held_jobs import Held, HeldJobs
from backroom.runtime.outcome_writer import AttemptListener, OutcomeWriter
from backroom.runtime.presence import Presence
from backroom.runtime.retention import RetentionSweep
from backroom.runtime.wakeup import Wakeup
from backroom.runtime.worker_config import WorkerConfig
from backroom.store.protocol import WorkerStore
from backroom.tasks import TaskRegistry
from backroom.telemetry import Telemetry

log = logging.getLogger("backroom.runtime.worker")
T = TypeVar("T")

_MIN_WAIT_MS = 1  # the shortest wait between two claims that found nothing: never a spin


class Worker:
    """Runs jobs from a store until stopped (or idle, in burst mode)."""

    def __init__(
        self,
        store: WorkerStore,
        tasks: TaskRegistry,
        *,
        clock: Clock,
        config: WorkerConfig | None = None,
        retry: RetryPolicy | None = None,
        classifier: ErrorClassifier | None = None,
        rng: random.Random | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.config = config or WorkerConfig()
        # The only tasks it claims: a job of another waits for a worker that has it.
        self._registry = tasks
        self._runner = AttemptRunner(
            store,
            tasks,
            clock=clock,
            retry=retry or RetryPolicy(),
            classifier=classifier or ErrorClassifier(),
            rng=rng or random.Random(),
            over_budget=self.config.over_budget,
            telemetry=telemetry,
        )
        self._held = HeldJobs(on_empty=self._on_all_let_go)
        self._executing = 0
        self._outcomes = OutcomeWriter(
            store, clock, retry_after_ms=self.config.poll_interval_ms, done=self._held.forget
        )
        self._outcomes.listeners.append(self._runner.telemetry.attempt_ended)
        self._wake = Wakeup(clock)
        self._presence = Presence(store, clock, self.config)
        self._stopping = False
        self._gathering = SlotGathering(self.config)

    @property
    def held(self) -> int:
        """How many jobs this worker holds (running, or finished but not yet stored)."""
        return len(self._held)

    def on_attempt_end(self, listener: AttemptListener) -> None:
        """Call `listener(job, outcome, now)` after each attempt's end is stored."""
        self._outcomes.listeners.append(listener)

    def stop(self) -> None:
        """Begin a graceful shutdown: stop claiming, let running jobs finish within the grace."""
        self._stopping = True
        self._wake.set()

    def install_signal_handlers(self) -> None:
        """Make SIGTERM and SIGINT begin a graceful shutdown."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self.stop)

    async def run(self) -> None:
        """Claim and run jobs until `stop()`, `stop_at`, or (burst) an empty queue."""
        self.store.on_new_work(self._on_new_work)
        if self.config.burst and self.config.drain:
            self.store.on_feed_change(self._on_feed_change)
        await self._presence.beat()
        writer = asyncio.create_task(self._outcomes.run(), name="backroom-flush")
        background = [asyncio.create_task(self._heartbeat_loop(), name="backroom-heartbeat")]
        changed = None if in_virtual_time() else self.store.commit_watch()
        if changed is not None and self.config.watch_ms > 0:
            watch = self._wake.watch(changed, self.config.watch_ms)
            background.append(asyncio.create_task(watch, name="backroom-commit-watch"))
        for service in self._registry.services:
            background.append(asyncio.create_task(service(), name="backroom-task-service"))
        if self.config.retention is not None:
            sweep = RetentionSweep(self.store, self.clock, self.config.retention)
            background.append(asyncio.create_task(sweep.run(), name="backroom-retention"))
        try:
            await self._claim_loop()
        finally:
            await self._held.hand_back(self.config.shutdown_grace_ms)
            self._outcomes.close()
            await writer
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)
            await self._presence.stopped()

    # -- claiming ---------------------------------------------------------------------

    async def _claim_loop(self) -> None:
        config = self.config
        next_sweep = self.clock.now()
        while not self._stopping:
            now = self.clock.now()
            if config.stop_at is not None and now >= config.stop_at:
                return
            self._wake.clear()
            free = config.concurrency - self._executing
            if (gather := self._gathering.until(now, free, running=self._executing)) is not None:
                await self._wake.wait(gather)
                continue
            claimed = await self._claim(free, now) if free > 0 else 0
            if now >= next_sweep:  # after the claim: a woken worker starts new work first
                await self._guarded(self.store.expire_leases(now))
                next_sweep = now + config.sweep_interval_ms
            if config.burst and claimed == 0 and not self._held and await self._idle():
                return
            await self._wake.wait(await self._next_poll(now, claimed, free))

    async def _claim(self, free: int, now: int) -> int:
        config = self.config
        jobs = await self._guarded(
            self.store.claim(
                config.queues, free, config.worker_id, config.lease_ms, now, self._claimable
            )
        )
        for job in jobs or ():
            held = self._held.add(job)
            self._executing += 1
            held.task = asyncio.create_task(self._attempt(held))
        await let_ready_tasks_run()  # a statement sent first may hand the CPU to the server
        return len(jobs or ())

    @property
    def _claimable(self) -> tuple[str, ...]:
        return self._registry.registered()

    async def _idle(self) -> bool:
        """True when no job in this worker's queues is queued or running (burst exit)."""
        try:
            return await self.store.next_wakeup(self.config.queues, self._claimable) is None
        except StoreError:
            return False

    async def _next_poll(self, now: int, claimed: int, free: int) -> int | None:
        """When to claim again; None means only when woken (a full batch is running).

        The poll interval covers work this worker was not told about (another process's
        submission, a lost notification). In virtual time nothing can arrive that way and
        a poll only costs an iteration, so the worker sleeps straight to the next due job,
        lease expiry or `stop_at`, or until its store announces new work.
        """
        config = self.config
        tick = now + config.poll_interval_ms
        if not config.drain:
            return tick
        if claimed == free:  # every slot is taken: claim again when one frees
            return None
        try:
            due = await self.store.next_wakeup(config.queues, self._claimable)
        except StoreError as error:
            log.warning("store call failed, will retry: %s", error)
            return tick
        poll = None if in_virtual_time() else tick
        deadlines = [at for at in (due, poll, config.stop_at) if at is not None]
        if not deadlines:
            return None
        # A job due already was just taken by another worker: look again shortly, not at once.
        return max(now + _MIN_WAIT_MS, min(deadlines))

    def _on_new_work(self) -> None:
        if self.config.drain:
            self._wake.set()

    def _on_feed_change(self) -> None:
        """Another worker's job may have ended. A burst worker holding nothing waits
        for those (one may come back to the queue) before it exits: it looks again now
        rather than at the next poll."""
        if not self._held:
            self._wake.set()

    def _on_all_let_go(self) -> None:
        if self.config.burst and self.config.drain:
            self._wake.set()  # the last held job is stored: a burst worker may be done

    async def _guarded(self, operation: Awaitable[T]) -> T | None:
        """Await a store call; on a store failure log it and return None (retried later)."""
        try:
            return await operation
        except StoreError as error:
            log.warning("store call failed, will retry: %s", error)
            return None

    # -- attempts ---------------------------------------------------------------------

    async def _attempt(self, held: Held) -> None:
        offloaded = False
        try:
            outcome = await self._runner.run(held.job, lambda: held.stop_reason)
        except Offloaded:  # a provider batch holds the job now
            outcome, offloaded = None, True
        finally:
            self._executing -= 1
            if self.config.drain:
                self._wake.set()
        if outcome is None:  # the lease was lost, or a provider batch holds the job
            if not offloaded:
                log_lease_lost(held.job, "while it ran")
            self._held.forget(held.job.id)
            return
        self._outcomes.add(held.job, outcome)

    async def _heartbeat_loop(self) -> None:
        lease_ms = self.config.lease_ms
        while True:
            await self._presence.wait(self._held.holding)
            leases = self._held.leases()
            now = self.clock.now()
            extend = self._guarded(self.store.heartbeat(leases, lease_ms, now)) if leases else None
            result = await self._presence.beat_beside(extend)
            if result is None:
                continue
            for job_id in result.lost:
                self._held.stop(job_id, StopReason.LEASE_LOST)
            for job_id in result.cancel_requested:
                self._held.stop(job_id, StopReason.CANCELLED)
