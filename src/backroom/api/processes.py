"""`backroom serve --processes N`: N server processes sharing one listening socket.

Python runs one thread at a time, so one server process under load keeps one core busy
and no more. With N processes the parent binds the socket, forks N children that each
serve the API on it (with in-process workers of their own), the kernel handing each new
connection to one of them, and waits for them. SIGINT or SIGTERM to the parent is passed
on to every child, and each stops as a single server does (the workers finish their
jobs). When a child ends for any other reason the others are stopped too, and the
parent exits with the first child's status, so a supervisor sees one server that failed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import traceback
from collections.abc import Callable
from types import FrameType

Child = Callable[[int], None]
"""What child number `index` (0 to N - 1) runs; it returns when it has stopped."""

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def run_processes(count: int, child: Child) -> int:
    """Fork `count` children running `child(index)`; wait for all; the exit status."""
    pids = [_fork(index, child) for index in range(count)]
    running = set(pids)

    def pass_on(signum: int, _frame: FrameType | None) -> None:
        _stop(running)

    previous = {signum: signal.signal(signum, pass_on) for signum in _SIGNALS}
    status: int | None = None
    try:
        while running:
            pid, wait_status = os.wait()
            running.discard(pid)
            if status is None:
                status = os.waitstatus_to_exitcode(wait_status)
                _stop(running)  # one ended: the server as a whole stops
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0 if status is None else abs(status)


def _fork(index: int, child: Child) -> int:
    pid = os.fork()
    if pid != 0:
        return pid
    code = 1
    try:
        child(index)
        code = 0
    except SystemExit as leaving:
        code = leaving.code if isinstance(leaving.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # never return into the parent's code


def _stop(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
