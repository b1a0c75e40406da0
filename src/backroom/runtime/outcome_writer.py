"""Store finished attempts in batches: one `store.finish` call for all that ended meanwhile.

The worker hands each attempt's outcome to an `OutcomeWriter` as soon as its handler
returns, so the slot frees before the outcome is stored; the writer's loop stores
whatever has gathered, keeps it and tries again after a pause when the store fails,
and tells the worker (and the attempt listeners, its telemetry's log lines and counters
among them) which jobs it is done with.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from backroom.clock import Clock
from backroom.core.errors import StoreError
from backroom.core.job import Job
from backroom.core.outcome import Outcome
from backroom.runtime.attempt_log import log_lease_lost
from backroom.store.protocol import LeaseStore

log = logging.getLogger("backroom.runtime.worker")

AttemptListener = Callable[[Job, Outcome, int], None]
"""Called with (job as claimed, outcome, now) after an attempt's end is stored."""


class OutcomeWriter:
    """Gathers finished attempts and stores them in batches until closed and empty.

    `done(job_id)` is called for every job once its outcome is stored or found to be
    too late (its lease was lost): the worker then no longer holds it.
    """

    def __init__(
        self, store: LeaseStore, clock: Clock, *, retry_after_ms: int, done: Callable[[int], None]
    ) -> None:
        self._store = store
        self._clock = clock
        self._retry_after_ms = retry_after_ms
        self._done = done
        self._finished: list[tuple[Job, Outcome]] = []
        self._gathered = asyncio.Event()
        self._closing = False
        self.listeners: list[AttemptListener] = []

    def add(self, job: Job, outcome: Outcome) -> None:
        """Queue one attempt's outcome for the next batch."""
        self._finished.append((job, outcome))
        self._gathered.set()

    def close(self) -> None:
        """Store what is left, then let `run` return."""
        self._closing = True
        self._gathered.set()

    async def run(self) -> None:
        """Store batches as outcomes arrive, until closed with nothing left to store."""
        while not (self._closing and not self._finished):
            await self._gathered.wait()
            self._gathered.clear()
            await self._write_all()

    async def _write_all(self) -> None:
        while self._finished:
            batch, self._finished = self._finished, []
            now = self._clock.now()
            try:
                applied = await self._store.finish([(job.lease, out) for job, out in batch], now)
            except StoreError as error:
                log.warning("storing %d outcomes failed, retrying: %s", len(batch), error)
                self._finished = batch + self._finished
                await self._clock.sleep(self._retry_after_ms)
                continue
            for (job, outcome), stored in zip(batch, applied, strict=True):
                self._done(job.id)
                if stored:
                    for listener in self.listeners:
                        listener(job, outcome, now)
                else:
                    log_lease_lost(job, "before its outcome was stored")
