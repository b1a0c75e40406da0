"""Time, in one place: the only module that reads the clock or sleeps.

`SystemClock` is wall time. `SimClock` is virtual time for tests and the demo: it
runs a coroutine on an event loop whose clock only moves when nothing else can, so a
worker's whole timeline (polls, heartbeats, timeouts, backoff) replays exactly and
instantly. Times are integers, milliseconds since the Unix epoch.
"""

from __future__ import annotations

import asyncio
import selectors
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

# One real select() never blocks longer than this while a thread is working, so a
# lost wake-up can only delay the virtual loop, never hang it.
_THREAD_WAIT_S = 0.05


class Clock(Protocol):
    """Reads the time and sleeps; injected wherever time matters."""

    def now(self) -> int:
        """Milliseconds since the Unix epoch."""

    async def sleep(self, ms: float) -> None:
        """Wait `ms` milliseconds."""


class SystemClock:
    """Wall-clock time; sleeps on the running event loop."""

    def now(self) -> int:
        """Milliseconds since the Unix epoch, from the system clock."""
        return time.time_ns() // 1_000_000

    async def sleep(self, ms: float) -> None:
        """Wait `ms` milliseconds of real time."""
        await asyncio.sleep(max(0.0, ms) / 1000)


async def let_ready_tasks_run() -> None:
    """Let the tasks that are ready take their next step before the caller goes on (one
    turn of the event loop; no time passes)."""
    await asyncio.sleep(0)


async def sleep_unless(clock: Clock, ms: float, *events: asyncio.Event) -> None:
    """Sleep `ms` on `clock`, or less if any of `events` is set first."""
    waiters: list[asyncio.Future[object]] = [asyncio.ensure_future(clock.sleep(ms))]
    waiters += [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)


def block(seconds: float) -> None:
    """Hold the calling thread for `seconds` of real time (for code with no event loop)."""
    time.sleep(max(0.0, seconds))


class _VirtualSelector(selectors.DefaultSelector):
    """A selector that jumps virtual time forward instead of waiting, when it may."""

    def __init__(self) -> None:
        super().__init__()
        self.loop: _VirtualTimeLoop | None = None

    def select(self, timeout: float | None = None) -> list[tuple[Any, int]]:
        ready: list[tuple[Any, int]] = super().select(0)
        loop = self.loop
        if ready or timeout == 0 or loop is None:
            return ready
        if loop.threads_busy:
            # A thread will report back through the loop's self-pipe: wait for it in
            # real time, leaving virtual time where it is.
            waited: list[tuple[Any, int]] = super().select(_THREAD_WAIT_S)
            return waited
        if timeout is None:
            # Nothing is scheduled: only real I/O can move things on.
            blocked: list[tuple[Any, int]] = super().select(None)
            return blocked
        loop.advance(timeout)
        return []


class _VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop whose `time()` is virtual and moves only when the loop is idle.

    Idle means: no callback ready, no I/O pending and no executor job running. Work
    handed to threads through `run_in_executor` (the SQLite store, sync handlers,
    `asyncio.to_thread`) keeps virtual time still until it reports back.
    """

    def __init__(self) -> None:
        selector = _VirtualSelector()
        super().__init__(selector)
        selector.loop = self
        self._virtual_s = 0.0
        self.threads_busy = 0

    def time(self) -> float:
        """Virtual seconds since the loop started."""
        return self._virtual_s

    def advance(self, seconds: float) -> None:
        """Move virtual time forward (called by the selector when the loop is idle)."""
        self._virtual_s += seconds

    def run_in_executor(  # type: ignore[override]
        self, executor: Executor | None, func: Callable[..., T], *args: Any
    ) -> asyncio.Future[T]:
        """Run `func` in a thread, holding virtual time until it is done."""
        future = super().run_in_executor(executor, func, *args)
        self.threads_busy += 1
        future.add_done_callback(self._thread_done)
        return future

    def _thread_done(self, _future: asyncio.Future[Any]) -> None:
        self.threads_busy -= 1


def in_virtual_time() -> bool:
    """True when the running event loop is a `SimClock`'s, where waiting costs nothing.

    Nothing outside such a loop can add work unannounced, so a worker there does not
    poll: it sleeps straight to its next due job or timer.
    """
    try:
        return isinstance(asyncio.get_running_loop(), _VirtualTimeLoop)
    except RuntimeError:
        return False


class SimClock:
    """Virtual time: `run(main)` runs a coroutine in a world where waiting is free.

    >>> clock = SimClock(start=0)
    >>> async def main() -> int:
    ...     await clock.sleep(8000)
    ...     return clock.now()
    >>> clock.run(main())
    8000
    """

    def __init__(self, start: int = 0) -> None:
        self._start = start
        self._loop: _VirtualTimeLoop | None = None

    def now(self) -> int:
        """The virtual time in milliseconds."""
        if self._loop is None:
            return self._start
        return self._start + round(self._loop.time() * 1000)

    async def sleep(self, ms: float) -> None:
        """Wait `ms` virtual milliseconds (instant in real time)."""
        if asyncio.get_running_loop() is not self._loop:
            raise RuntimeError("SimClock.sleep must run inside SimClock.run()")
        await asyncio.sleep(max(0.0, ms) / 1000)

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        """Run `main` to completion on a virtual-time loop and return its result.

        Time carries over from one `run` to the next.
        """
        loop = _VirtualTimeLoop()
        if self._loop is not None:
            loop.advance(self._loop.time())
        self._loop = loop
        try:
            return loop.run_until_complete(main)
        finally:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            finally:
                loop.close()
