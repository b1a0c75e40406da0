"""When the worker's claim loop looks for work again: `Wakeup`.

The claim loop waits until its next poll, or less when woken: by a freed slot, by
its store's new-work hint, or, where the store has no notifications between
processes (SQLite), by the commit watch. While the loop waits with free slots, the
watch runs the store's `commit_watch` check every `every_ms` and wakes it when
another process committed. A commit is not always new work (a finish, a heartbeat):
the worker then claims nothing and waits again, at the cost of one write transaction
that changes nothing. While every slot is busy nothing is checked.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from backroom.clock import Clock


class Wakeup:
    """The claim loop's wait: until a deadline (None: until woken), or until `set()`."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._event = asyncio.Event()
        self._watching = asyncio.Event()  # set while waiting for a deadline

    def set(self) -> None:
        """Wake the loop now, or at its next wait if it is not waiting."""
        self._event.set()

    def clear(self) -> None:
        """Forget earlier wake-ups: the loop is about to look for work."""
        self._event.clear()

    async def wait(self, deadline: int | None) -> None:
        """Return at `deadline` (clock milliseconds), or sooner when woken."""
        if deadline is None:
            await self._event.wait()
            return
        delay_s = max(0, deadline - self._clock.now()) / 1000
        self._watching.set()
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay_s):
                    await self._event.wait()
        finally:
            self._watching.clear()

    async def watch(self, changed: Callable[[], bool], every_ms: int) -> None:
        """Wake the loop when `changed()` reports a commit, checking while it waits."""
        while True:
            await self._watching.wait()
            await self._clock.sleep(every_ms)
            if self._watching.is_set() and changed():
                self._event.set()
