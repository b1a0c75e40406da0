"""CPU seconds of this process and of one database's server backends, between marks.

The load average on a shared machine moves a rate by 2x between rounds; the CPU a job
costs moves far less. A backend's CPU is read from `/proc/<pid>/stat` (Linux, the
server on this machine), for the backends of the metered database alive at the mark
that ends a span: a backend that connected during it counts from its start.
"""

from __future__ import annotations

import os
import time

import asyncpg

_BACKENDS = """
SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
"""
_TICK = os.sysconf("SC_CLK_TCK")


def _process_cpu(pid: int) -> float:
    """User and system CPU seconds of process `pid` (0 if it has gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


class CpuMeter:
    """Sums the CPU of spans (`start` ... `stop`): `client` this process's, `server`
    the backends' of the database at `url` (None: no server, SQLite in this process)."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self.client = 0.0
        self.server = 0.0
        self._client_mark = 0.0
        self._server_marks: dict[int, float] = {}

    async def _backends(self) -> dict[int, float]:
        if self.url is None:
            return {}
        connection = await asyncpg.connect(self.url)
        try:
            pids = [row["pid"] for row in await connection.fetch(_BACKENDS)]
        finally:
            await connection.close()
        return {pid: _process_cpu(pid) for pid in pids}

    async def start(self) -> None:
        """Begin a span."""
        self._server_marks = await self._backends()
        self._client_mark = time.process_time()

    async def stop(self) -> None:
        """End the span begun last, adding its CPU."""
        self.client += time.process_time() - self._client_mark
        ended = await self._backends()
        self.server += sum(cpu - self._server_marks.get(pid, 0.0) for pid, cpu in ended.items())
