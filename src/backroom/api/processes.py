"""`backroom serve --processes N`: N server processes sharing one listening socket.

Python runs one thread at a time, so one server process under load keeps one core busy
and no more. With N processes the parent binds the socket and forks N children
(`backroom.runtime.processes`) that each serve the API on it (with in-process workers of
their own), the kernel handing each new connection to one of them. When a child ends
the others are stopped too (the workers finish their jobs).
"""

from __future__ import annotations

import mmap
import socket
from typing import Any

_DECLINES = 100
"""How many wake-ups in a row a process with more connections than another lets a
waiting connection be, before it takes it anyway (the other may be stopped)."""


class SharedListener(socket.socket):
    """The listening socket of `serve --processes N`, which shares new connections out.

    Every process waiting on the shared socket is woken by a new connection, and
    asyncio accepts in a loop until none is left: the first process to run took every
    connection of a burst (a client pool opening 32 at once: all 32, the other process
    idle, under load most times). Here a process accepts one connection per wake-up,
    and lets one wait (for the others, woken by it too) while it holds more open
    connections than another process: each publishes its count in memory shared
    by the processes, when it is woken by a new connection. A count read may be
    stale, only ever high (connections closed since), and a connection let wait
    `_DECLINES` times running is taken anyway, so a stopped process holds none up.
    """

    _counts: memoryview
    _index = 0
    _took_one = False
    _declined = 0

    def share(self, count: int) -> None:
        """Before the fork: the shared counts of `count` processes."""
        self._counts = memoryview(mmap.mmap(-1, 8 * count)).cast("q")
        self._accepted: list[socket.socket] = []

    def serve_as(self, index: int) -> None:
        """In child `index`: its slot of the counts."""
        self._index = index

    def accept(self) -> tuple[socket.socket, Any]:
        """A waiting connection, or BlockingIOError: none waits, this process took one
        on this wake-up already, or another process holds fewer."""
        if self._took_one:
            self._took_one = False
            raise BlockingIOError
        self._accepted = [open_one for open_one in self._accepted if open_one.fileno() != -1]
        held = self._counts[self._index] = len(self._accepted)
        fewest = min(
            self._counts[: self._index].tolist() + self._counts[self._index + 1 :].tolist()
        )
        if held > fewest and self._declined < _DECLINES:
            self._declined += 1
            raise BlockingIOError
        connection, address = super().accept()
        self._declined = 0
        self._took_one = True
        self._accepted.append(connection)
        self._counts[self._index] = held + 1
        return connection, address


def shared_listener(listener: socket.socket, count: int) -> SharedListener:
    """`listener`, to be shared by `count` processes (see `SharedListener`)."""
    shared = SharedListener(listener.family, listener.type, listener.proto, listener.detach())
    shared.share(count)
    return shared
