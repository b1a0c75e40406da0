"""How every system's no-op handler says it ran: 8 bytes appended to one shared file.

Each handler start appends `time.perf_counter_ns()` (CLOCK_MONOTONIC on Linux, one
clock for every process on the machine) to the file named by `BENCH_MARKS`, with one
`write` on a descriptor opened with O_APPEND: atomic between processes, a few
microseconds, the same cost in every system measured. The runner counts the records to
know how many jobs ran and reads their times for windows and pickup latencies.
"""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path

ENV = "BENCH_MARKS"
RECORD = struct.Struct("<q")

_descriptor: int | None = None


def mark(*_: object, **__: object) -> None:
    """Record that a job's handler started (any arguments are ignored)."""
    global _descriptor  # noqa: PLW0603  # one descriptor per process, opened on first use
    if _descriptor is None:
        _descriptor = os.open(os.environ[ENV], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(_descriptor, RECORD.pack(time.perf_counter_ns()))


async def mark_async(*_: object, **__: object) -> None:
    """`mark` for the systems whose handlers are coroutines."""
    mark()


def count(path: Path) -> int:
    """How many handlers have started so far."""
    try:
        return path.stat().st_size // RECORD.size
    except FileNotFoundError:
        return 0


def read(path: Path, first: int = 0) -> list[int]:
    """The recorded times (ns) from record `first` on, in the order they were written."""
    with path.open("rb") as records:
        records.seek(first * RECORD.size)
        data = records.read()
    whole = len(data) - len(data) % RECORD.size
    return [value for (value,) in RECORD.iter_unpack(data[:whole])]
