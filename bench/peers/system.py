"""What the runner needs of each system: empty its queue, enqueue, submit one job, and
the command that starts its worker as its users start it."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

BIN = Path(sys.executable).parent
"""The peers venv's scripts: each worker starts from its own console script."""

Submit = Callable[[], Awaitable[object]]


class System:
    """One queue on one store. Subclasses fill in every method that raises here."""

    name = ""
    store = ""
    bulk = False
    """Whether the system has a call that enqueues many jobs at once."""

    def worker(self) -> list[str]:
        """The command that starts one worker at the system's defaults."""
        raise NotImplementedError

    def env(self) -> dict[str, str]:
        """Environment variables the worker needs (its database or broker)."""
        return {}

    async def prepare(self) -> None:
        """Once per run: install the system's schema, open what the runner keeps."""

    async def enqueue(self, jobs: int, *, bulk: bool) -> float:
        """Empty the queue, then return the seconds `jobs` no-op jobs take to enqueue."""
        raise NotImplementedError

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[Submit]:
        """A client that submits one no-op job per call (for the pickup latency)."""
        raise NotImplementedError
        yield

    async def close(self) -> None:
        """Once per run, at the end."""


def seconds(work: Callable[[], object]) -> float:
    """Seconds a synchronous loop takes."""
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


async def seconds_async(work: Callable[[], Awaitable[object]]) -> float:
    """Seconds an asynchronous loop takes."""
    started = time.perf_counter()
    await work()
    return time.perf_counter() - started


def chunks(jobs: int, size: int) -> list[int]:
    """The sizes of the calls that enqueue `jobs` jobs `size` at a time."""
    return [min(size, jobs - first) for first in range(0, jobs, size)]
