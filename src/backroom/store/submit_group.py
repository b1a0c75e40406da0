"""Group commit of single submissions: concurrent `submit` calls share one store call.

Each `submit` is a transaction and a commit (an fsync on SQLite, a WAL flush and round
trips on PostgreSQL). An API server under load has many in flight at once; with
`SubmitGroups`, what gathers while earlier groups are being stored goes to the store as
one `submit_many` (one multi-row insert, one transaction), so a commit carries every
submission that arrived meanwhile. At most `parallel` groups are in flight at once (a
store with one writer wants 1; a pool of connections more). One caller alone waits for
nothing: its group is itself.

A group either stores every submission or none (one transaction), or (PostgreSQL,
when no job of the group has a cap) stores each in one statement and answers each on
its own. When one submission of an all-or-none group is refused (its key was used with
another body, or its tenant is at its cap), the group is stored again one submission
at a time, so only that one is refused: each caller gets exactly the answer it would
have got alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from backroom.core.errors import IdempotencyConflict, QueueFull
from backroom.core.job import NewJob, SubmitResult

StoreGroup = Callable[[Sequence[NewJob], int], Awaitable[Sequence[SubmitResult | Exception]]]
"""Store several jobs, in order: all or none (raising what one of them earned), or
each on its own (each one's result, or the error it alone earned)."""

StoreOne = Callable[[NewJob, int], Awaitable[SubmitResult]]
"""Store one job."""

_REFUSALS = (IdempotencyConflict, QueueFull)
"""What one submission of a group may earn on its own: the others must not share it."""


@dataclass(slots=True)
class _Waiting:
    new: NewJob
    now: int
    future: asyncio.Future[SubmitResult]


class SubmitGroups:
    """Single submissions, stored a group at a time (see the module)."""

    def __init__(self, store_group: StoreGroup, store_one: StoreOne, parallel: int = 1) -> None:
        self._store_group = store_group
        self._store_one = store_one
        self._parallel = parallel
        self._pending: list[_Waiting] = []
        self._flushing = 0
        # The running flushers, held so that none is garbage-collected mid-flight.
        self._flushers: set[asyncio.Task[None]] = set()

    async def submit(self, new: NewJob, now: int) -> SubmitResult:
        """Store `new` with whatever else is waiting; its own result or error."""
        future: asyncio.Future[SubmitResult] = asyncio.get_running_loop().create_future()
        self._pending.append(_Waiting(new, now, future))
        if self._flushing < self._parallel:
            # Counted now, and uncounted by the flusher in the same step in which it
            # finds nothing left: a submission never waits without a flusher to take it.
            self._flushing += 1
            flusher = asyncio.create_task(self._flush())
            self._flushers.add(flusher)
            flusher.add_done_callback(self._flushers.discard)
        return await future

    async def _flush(self) -> None:
        group: list[_Waiting] = []
        try:
            while self._pending:
                group, self._pending = self._pending, []
                if len(group) == 1:
                    await self._alone(group[0])
                else:
                    await self._together(group)
        finally:
            self._flushing -= 1
            # Cancelled midway (the loop is closing): no caller is left waiting for ever.
            for waiting in group:
                waiting.future.cancel()

    async def _together(self, group: list[_Waiting]) -> None:
        # The group's time is its latest submission's: no job is created before its call.
        now = max(waiting.now for waiting in group)
        try:
            results = await self._store_group([waiting.new for waiting in group], now)
        except _REFUSALS:
            for waiting in group:
                await self._alone(waiting)
            return
        except BaseException as error:
            for waiting in group:
                _settle(waiting.future, error=error)
            if not isinstance(error, Exception):
                raise
            return
        for waiting, result in zip(group, results, strict=True):
            if isinstance(result, Exception):
                _settle(waiting.future, error=result)
            else:
                _settle(waiting.future, result)

    async def _alone(self, waiting: _Waiting) -> None:
        try:
            result = await self._store_one(waiting.new, waiting.now)
        except Exception as error:
            _settle(waiting.future, error=error)
        except BaseException as error:
            _settle(waiting.future, error=error)
            raise
        else:
            _settle(waiting.future, result)


def _settle(
    future: asyncio.Future[SubmitResult],
    result: SubmitResult | None = None,
    *,
    error: BaseException | None = None,
) -> None:
    """Answer a caller, unless it stopped waiting (its request was cancelled)."""
    if future.done():
        return
    if isinstance(error, asyncio.CancelledError):
        future.cancel()
    elif error is not None:
        future.set_exception(error)
    elif result is not None:
        future.set_result(result)
