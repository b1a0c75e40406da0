"""A worker's row in the worker registry: registered at start, refreshed on each
heartbeat tick, marked stopped at a graceful shutdown (see `WorkerRegistry`).

One store write per heartbeat interval per process, however many jobs it holds: the
beat goes to the store beside the leases' heartbeat (`beat_beside`), which SQLite
group-commits with it. A store failure is logged and left to the next tick, as a lease
heartbeat's is.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Awaitable
from typing import TypeVar

from backroom.clock import Clock, in_virtual_time
from backroom.core.errors import StoreError
from backroom.core.workers import WorkerInfo
from backroom.runtime.worker_config import WorkerConfig
from backroom.store.worker_protocol import WorkerRegistry

log = logging.getLogger("backroom.runtime.presence")
T = TypeVar("T")


class Presence:
    """Tells the registry this worker process is alive, then that it stopped."""

    def __init__(self, registry: WorkerRegistry, clock: Clock, config: WorkerConfig) -> None:
        self._registry = registry
        self._clock = clock
        self.info = WorkerInfo(
            worker_id=config.worker_id,
            hostname=socket.gethostname(),
            pid=os.getpid(),
            queues=tuple(config.queues),
            concurrency=config.concurrency,
            heartbeat_ms=config.heartbeat_every_ms,
            started_at=clock.now(),
        )

    async def beat(self) -> None:
        """Register, or refresh the heartbeat, as of now."""
        try:
            await self._registry.worker_beat(self.info, self._clock.now())
        except StoreError as error:
            log.warning("worker heartbeat failed, will retry: %s", error)

    async def wait(self, holding: asyncio.Event) -> None:
        """Wait one heartbeat interval.

        Idle in virtual time, it first waits for the worker to hold a job (`holding`):
        there a tick would be an iteration of the simulation for nothing.
        """
        if in_virtual_time():
            await holding.wait()
        await self._clock.sleep(self.info.heartbeat_ms)

    async def beat_beside(self, extend: Awaitable[T] | None) -> T | None:
        """Beat, and await `extend` (the leases' heartbeat, if any) beside it: both go
        to the store at once, so a group-committing store (SQLite) writes them in one
        transaction. What `extend` returned (None without it)."""
        if extend is None:
            await self.beat()
            return None
        _, result = await asyncio.gather(self.beat(), extend)
        return result

    async def stopped(self) -> None:
        """Say this worker stopped (a graceful shutdown)."""
        try:
            await self._registry.worker_stopped(self.info.worker_id, self._clock.now())
        except StoreError as error:
            log.warning("could not mark the worker stopped: %s", error)
