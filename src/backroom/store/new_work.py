"""New-work hints within one process, for stores that cannot notify other processes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class NewWorkHints:
    """Callbacks told (on the event loop) when this process may have made work claimable.

    For the stores without notifications between processes (SQLite, memory): workers
    elsewhere find the work by polling.
    """

    def __init__(self) -> None:
        self._callbacks: list[Callable[[], None]] = []

    def add(self, callback: Callable[[], None]) -> None:
        """Call `callback` after each later announcement."""
        self._callbacks.append(callback)

    def announce(self) -> None:
        """Schedule every callback on the running loop."""
        loop = asyncio.get_running_loop()
        for callback in self._callbacks:
            loop.call_soon(callback)
