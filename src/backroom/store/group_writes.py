"""Group writes: what concurrent callers hand in at about the same time is written in
one store call, and each caller gets its own answer.

    writer = GroupWriter(write_many)        # write_many(items) -> one answer per item
    answer = await writer.add(item)

A write costs a transaction and a commit (an fsync on SQLite, a WAL flush and round
trips on PostgreSQL) whether it carries one item or a hundred. The first item starts a
write on the event loop's next turn, so items handed in meanwhile join it; what
arrives while it is under way goes in the next. At most `parallel` writes are in
flight at once (a store with one writer wants 1; a pool of connections more). One
caller alone waits for nothing: its group is itself. With a `turn` (SQLite's write
turn between processes), a group is closed only once the turn is this process's.

A caller that stops waiting (its request or attempt cancelled) does not cut its group's
write short: the write goes on and the others get their answers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

Turn = Callable[[], AbstractAsyncContextManager[object]]
"""What a group waits for before it is closed, held while it is written: a store whose
writers take turns passes its turn, so what arrives while another writes joins."""

WriteMany = Callable[[list[T]], Awaitable[Sequence[R | Exception]]]
"""Write a group, in order: each item's answer, or the error it alone earned. Raising
answers every item of the group with that error."""


class GroupWriter(Generic[T, R]):
    """Items handed in concurrently, written a group at a time (see the module)."""

    def __init__(
        self, write_many: WriteMany[T, R], parallel: int = 1, turn: Turn | None = None
    ) -> None:
        self._write_many = write_many
        self._parallel = parallel
        self._turn = turn or contextlib.nullcontext
        self._pending: list[tuple[T, asyncio.Future[R]]] = []
        self._writing = 0
        # The running writers, held so that none is garbage-collected mid-flight.
        self._writers: set[asyncio.Task[None]] = set()
        self.groups = 0
        """How many groups were written (for tests and benchmarks)."""

    def add(self, item: T) -> asyncio.Future[R]:
        """The answer to `item`, once the group it joins is written."""
        answer: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._pending.append((item, answer))
        if self._writing < self._parallel:
            # Counted now, and uncounted by the writer in the same step in which it
            # finds nothing left: an item never waits without a writer to take it.
            self._writing += 1
            writer = asyncio.create_task(self._drain())
            self._writers.add(writer)
            writer.add_done_callback(self._writers.discard)
        return answer

    async def _drain(self) -> None:
        group: list[tuple[T, asyncio.Future[R]]] = []
        try:
            while self._pending:
                async with self._turn():
                    group, self._pending = self._pending, []
                    self.groups += 1
                    await self._write(group)
                group = []
        finally:
            self._writing -= 1
            # Cancelled midway (the loop is closing): no caller is left waiting for ever.
            for _, answer in group:
                answer.cancel()

    async def _write(self, group: list[tuple[T, asyncio.Future[R]]]) -> None:
        try:
            answers = await self._write_many([item for item, _ in group])
        except BaseException as error:
            for _, answer in group:
                _settle(answer, error)
            if not isinstance(error, Exception):
                raise
            return
        for (_, answer), result in zip(group, answers, strict=True):
            _settle(answer, result)


def _settle(answer: asyncio.Future[R], result: R | BaseException) -> None:
    """Answer a caller, unless it stopped waiting."""
    if answer.done():
        return
    if isinstance(result, asyncio.CancelledError):
        answer.cancel()
    elif isinstance(result, BaseException):
        answer.set_exception(result)
    else:
        answer.set_result(result)
