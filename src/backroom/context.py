"""What a handler sees of its job: `ctx.job`, `ctx.attempt`, progress and `once`."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

from backroom.clock import Clock
from backroom.core.errors import LeaseLost, OnceUncertain, StoreUnavailable
from backroom.core.job import JSON, Job
from backroom.store.protocol import HandlerWriteStore

log = logging.getLogger("backroom.context")
T = TypeVar("T")
R = TypeVar("R")

# How a handler's idempotent writes (progress, the end of a `once` effect) are retried
# while the store is unreachable (a database restart): first wait, longest wait, and
# the total after which the error reaches the handler.
WRITE_RETRY_FIRST_MS = 100
WRITE_RETRY_CAP_MS = 5_000
WRITE_RETRY_BUDGET_MS = 120_000


class JobContext:
    """Handed to every handler call; bound to one attempt and its lease."""

    def __init__(self, job: Job, store: HandlerWriteStore, clock: Clock) -> None:
        self._job = job
        self._store = store
        self._clock = clock

    @property
    def job(self) -> Job:
        """The job as it was when this attempt claimed it."""
        return self._job

    @property
    def attempt(self) -> int:
        """This attempt's number, from 1."""
        return self._job.attempt

    @property
    def clock(self) -> Clock:
        """The worker's clock: handlers that wait should wait on it."""
        return self._clock

    async def progress(self, fraction: float | None = None, partial: JSON = None) -> None:
        """Store coarse progress (0..1) and partial output on the job, for pollers to see.

        Retried while the store is unreachable (it only sets values). Raises `LeaseLost`
        when this attempt no longer holds the job.
        """
        if fraction is not None and not 0.0 <= fraction <= 1.0:
            raise ValueError("progress must be between 0 and 1")
        stored = await self._through_outage(
            "storing progress",
            lambda: self._store.set_progress(self._job.lease, fraction, partial, self._clock.now()),
        )
        if not stored:
            raise LeaseLost(f"job {self._job.id} is no longer held by this attempt")

    @overload
    async def once(self, name: str, effect: Callable[[], Awaitable[T]]) -> T | Any: ...

    @overload
    async def once(self, name: str, effect: Callable[[], T]) -> T | Any: ...

    async def once(self, name: str, effect: Callable[[], Awaitable[T] | T]) -> T | Any:
        """Run `effect` at most once for this job and `name`, across retries and crashes.

        A repeat returns the result stored the first time. If an earlier attempt began
        the effect and died before recording its end, the effect may or may not have
        happened: `OnceUncertain` is raised rather than risk doing it twice, and fails
        the job for good (a redrive, after a person checked, runs it again). If the
        effect raises, nothing is recorded and a later attempt may run it again.
        """
        lease = self._job.lease
        record = await self._store.once_begin(lease, name, self._clock.now())
        if record is not None:
            if record.done:
                return record.result
            raise OnceUncertain(name, self._job.id)
        try:
            value = effect()
            if inspect.isawaitable(value):
                value = await value
        except Exception:
            # It failed, so it most likely did not happen: let a later attempt try again.
            # A cancelled effect (BaseException) stays begun: it may have half happened.
            await self._through_outage(
                f"forgetting the failed effect {name!r}",
                lambda: self._store.once_abort(lease, name),
            )
            raise
        # The effect has run: losing this write would leave it uncertain and fail the job
        # for good, so it is retried across an outage.
        await self._through_outage(
            f"recording the end of effect {name!r}",
            lambda: self._store.once_end(lease, name, value, self._clock.now()),
        )
        return value

    async def _through_outage(self, what: str, write: Callable[[], Awaitable[R]]) -> R:
        """Run `write`, retrying with backoff while the store is unreachable.

        Only for writes that are idempotent and fenced by the lease: a repeat changes
        nothing, and a lost lease still ends it (`LeaseLost`). So a database restart
        costs the handler time, not an attempt.
        """
        delay_ms, waited_ms = WRITE_RETRY_FIRST_MS, 0
        while True:
            try:
                return await write()
            except StoreUnavailable as error:
                if waited_ms >= WRITE_RETRY_BUDGET_MS:
                    raise
                log.warning(
                    "job %d: %s failed, retrying in %d ms: %s", self._job.id, what, delay_ms, error
                )
            await self._clock.sleep(delay_ms)
            waited_ms += delay_ms
            delay_ms = min(2 * delay_ms, WRITE_RETRY_CAP_MS)
