"""N forked copies of one process's work: `serve --processes N` and `worker --processes N`.

The parent imports the app and everything it needs once, then forks: each child starts
from that state (copy on write) rather than importing it all again, so N processes
started on a small machine do not spend their first second importing side by side.
Nothing may hold a connection or an event loop across the fork: each child opens its
own. SIGINT or SIGTERM to the parent is passed on to every child, and each stops as a
single process does. A child that fails stops the others, and the parent exits with its
status, so a supervisor sees one service that failed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import traceback
from collections.abc import Callable
from types import FrameType

log = logging.getLogger("backroom.processes")

Child = Callable[[int], None]
"""What child number `index` (0 to N - 1) runs; it returns when it has stopped."""

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def run_processes(count: int, child: Child, *, stop_together: bool = True) -> int:
    """Fork `count` children running `child(index)`; wait for all; the exit status.

    With `stop_together` (servers, workers that run until stopped) any child's end
    stops the others; without it (`worker --burst`, each child ends once idle) only a
    failure does. The status is the first nonzero one of a child (ended by SIGTERM
    counts as stopped, not failed), else 0.
    """
    running = {_fork(index, child) for index in range(count)}

    def pass_on(signum: int, _frame: FrameType | None) -> None:
        _stop(running)

    previous = {signum: signal.signal(signum, pass_on) for signum in _SIGNALS}
    status = 0
    try:
        while running:
            pid, wait_status = os.wait()
            running.discard(pid)
            code = os.waitstatus_to_exitcode(wait_status)
            # A child the stop reached before it could handle it did not fail.
            code = 0 if code == -signal.SIGTERM else abs(code)
            if code:
                log.error("process %d ended with status %d: stopping the others", pid, code)
            if code or stop_together:
                _stop(running)
            status = status or code
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return status


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
