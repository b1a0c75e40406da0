"""One attempt of one job: call its handler and say how it ended, as an `Outcome`."""

from __future__ import annotations

import asyncio
import enum
import random
from collections.abc import Awaitable, Callable

from backroom.clock import Clock
from backroom.context import JobContext
from backroom.core.errors import (
    BudgetRefused,
    InvalidJson,
    LaneLimited,
    LeaseLost,
    Offloaded,
    Retryable,
)
from backroom.core.job import ErrorInfo, Job
from backroom.core.outcome import Cancelled, Failed, Outcome, Released, Succeeded
from backroom.core.plain_json import check_plain_json
from backroom.core.retry import ErrorClassifier, RetryPolicy, outcome_for_error
from backroom.core.usage import OverBudget
from backroom.runtime.fallback import LaneFallbacks
from backroom.runtime.lane_gate import LaneGate
from backroom.store.protocol import AttemptStore
from backroom.tasks import Task, TaskRegistry
from backroom.telemetry import Telemetry


class StopReason(enum.StrEnum):
    """Why the worker interrupted a running handler."""

    CANCELLED = "cancelled"
    SHUTDOWN = "shutdown"
    LEASE_LOST = "lease_lost"


class AttemptRunner:
    """Runs handlers and classifies what they did, for the worker to store.

    A job whose task has a lane first passes the `LaneGate`; `over_budget` says what
    it does when its tenant's daily budget is spent.
    """

    def __init__(
        self,
        store: AttemptStore,
        tasks: TaskRegistry,
        *,
        clock: Clock,
        retry: RetryPolicy,
        classifier: ErrorClassifier,
        rng: random.Random,
        over_budget: OverBudget = OverBudget.WAIT,
        telemetry: Telemetry | None = None,
    ) -> None:
        self._store = store
        self._tasks = tasks
        self._clock = clock
        self._retry = retry
        self._classifier = classifier
        self._rng = rng
        self._gate = LaneGate(store, clock, over_budget, rng)
        self.telemetry = telemetry or Telemetry()
        """Told of every attempt that starts (and by the worker, of its stored end)."""
        self._fallbacks = LaneFallbacks(store, clock)

    async def run(self, job: Job, stop_reason: Callable[[], StopReason | None]) -> Outcome | None:
        """Run one attempt of `job`; None when its lease was lost (store nothing).

        Raises `Offloaded` when its handler handed the job to a provider batch.
        """
        with self.telemetry.attempt(job, self._clock) as span:
            outcome = await self._run(job, stop_reason)
            span.ended(outcome)
        return outcome

    async def _run(self, job: Job, stop_reason: Callable[[], StopReason | None]) -> Outcome | None:
        task = self._tasks.get(job.task)
        if task is None:
            # Likely a rolling deploy: a worker that knows the task may come along.
            unknown = Retryable(f"no task named {job.task!r} is registered in this worker")
            return self._failure(job, unknown, None)
        try:
            if task.lane_request is None:  # no lane gate to pass
                return await self._handled(job, task)
            return await self._admitted_run(job, task)
        except asyncio.CancelledError:
            reason = stop_reason()
            if reason is None:
                raise
            return _interrupted(reason)

    async def _admitted_run(self, job: Job, task: Task) -> Outcome | None:
        """Pass the job's lane gate (if its task has a lane), then call the handler."""
        if task.lane_request is None or (task.gate_free is not None and task.gate_free(job)):
            return await self._handled(job, task)
        try:
            job, unstarted = await self._fallbacks.admit(job, task, self._gate.admit)
        except LeaseLost:
            return None
        if unstarted is not None:
            return unstarted
        try:
            return await self._handled(job, task)
        finally:
            await self._gate.release(job)

    async def _handled(self, job: Job, task: Task) -> Outcome:
        """Call the handler under the attempt's timeout; how it ended."""
        try:
            result = await self._timed_call(task, job)
        except Offloaded:
            raise  # the job waits in a provider batch: no outcome to store
        except Exception as error:  # a handler may raise anything: classify it
            if task.lane_request is not None and isinstance(error, LaneLimited):
                waiting = await self._gate.refused(job, error)
                if waiting is not None:
                    return await self._fallbacks.after_failure(job, task, waiting)
            if isinstance(error, BudgetRefused):
                return self._gate.budget_refused(job, error)
            return await self._fallbacks.after_failure(job, task, self._failure(job, error, task))
        return _success(result)

    async def _timed_call(self, task: Task, job: Job) -> object:
        """The handler's result, under the attempt's timeout if it has one (without one,
        no `asyncio.timeout` context: ~1.5 us a job for nothing)."""
        timeout = _timeout_s(job, task)
        if timeout is None:
            return await self._call(task, job)
        async with asyncio.timeout(timeout):
            return await self._call(task, job)

    def _call(self, task: Task, job: Job) -> Awaitable[object]:
        """The handler's run: its coroutine, or a sync handler's in a thread."""
        ctx = JobContext(job, self._store, self._clock)
        if task.is_async:
            return task.handler(ctx, job.input)
        return asyncio.to_thread(task.handler, ctx, job.input)

    def _failure(self, job: Job, error: Exception, task: Task | None) -> Outcome:
        policy = task.retry if task is not None and task.retry is not None else self._retry
        return outcome_for_error(
            job,
            error,
            policy=policy,
            classifier=self._classifier,
            now=self._clock.now(),
            rng=self._rng,
        )


def _timeout_s(job: Job, task: Task) -> float | None:
    if job.timeout_ms is not None:
        return job.timeout_ms / 1000
    return task.timeout_s


def _success(result: object) -> Outcome:
    try:
        check_plain_json(result, "the handler's result")
    except InvalidJson as error:
        return Failed(ErrorInfo("TypeError", str(error)))
    return Succeeded(result)


def _interrupted(reason: StopReason) -> Outcome | None:
    if reason is StopReason.CANCELLED:
        return Cancelled("cancelled while running")
    if reason is StopReason.SHUTDOWN:
        return Released()
    return None
