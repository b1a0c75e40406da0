"""CPU a benchmark run used: its worker processes' and their PostgreSQL backends'.

Workers are this process's children, so their CPU is the change in `RUSAGE_CHILDREN`
over the run (start-up included). Backends are the server's processes serving one
database: each is titled `postgres: user database host ...`, so a thread reads
their CPU from /proc every few milliseconds while the run lasts and keeps each one's
last reading (a backend that exits keeps what it used). Another machine's server, or a
system without /proc, reads as 0.
"""

from __future__ import annotations

import os
import resource
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class CpuUse:
    """Seconds of CPU: the workers' (user + system) and their database's backends'."""

    workers: float = 0.0
    backends: float = 0.0


def _children_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _database_of(command_line: bytes) -> str | None:
    """The database a backend serves, from its title: `postgres: [cluster:] user
    database host(port) state` (None: not a backend)."""
    words = command_line.split(b"\0")[0].decode(errors="replace").split()
    if not words or words[0] != "postgres:":
        return None
    words = words[1:]
    if words and words[0].endswith(":"):  # the cluster's name (Debian: `15/main:`)
        words = words[1:]
    return words[1] if len(words) > 2 else None


def _backends(database: str) -> dict[int, float]:
    """Seconds of CPU of each backend of `database` now."""
    seconds: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if _database_of((entry / "cmdline").read_bytes()) != database:
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        seconds[int(entry.name)] = (int(fields[11]) + int(fields[12])) / _TICKS
    return seconds


def cpu_of(run: Callable[[], None], database: str, every_s: float = 0.02) -> CpuUse:
    """Call `run` (which starts and waits for the worker processes); the CPU it used."""
    before_children = _children_seconds()
    before = _backends(database)
    seen: dict[int, float] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.wait(every_s):
            seen.update(_backends(database))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        run()
    finally:
        done.set()
        sampler.join()
    seen.update(_backends(database))
    backends = sum(used - before.get(pid, 0.0) for pid, used in seen.items())
    return CpuUse(_children_seconds() - before_children, backends)
