"""A worker's row in the worker registry: registered at start, refreshed on each
heartbeat tick, marked stopped at a graceful shutdown (see `WorkerRegistry`).

One store write per heartbeat interval per process, however many jobs it holds; a
store failure is logged and left to the next tick, as a lease heartbeat's is.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket

from backroom.clock import Clock, in_virtual_time
from backroom.core.errors import StoreError
from backroom.core.workers import WorkerInfo
from backroom.runtime.worker_config import WorkerConfig
from backroom.store.worker_protocol import WorkerRegistry

log = logging.getLogger("backroom.runtime.presence")


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

    async def tick(self, holding: asyncio.Event) -> None:
        """Wait one heartbeat interval, then beat.

        Idle in virtual time, it first waits for the worker to hold a job (`holding`):
        there a tick would be an iteration of the simulation for nothing.
        """
        if in_virtual_time():
            await holding.wait()
        await self._clock.sleep(self.info.heartbeat_ms)
        await self.beat()

    async def stopped(self) -> None:
        """Say this worker stopped (a graceful shutdown)."""
        try:
            await self._registry.worker_stopped(self.info.worker_id, self._clock.now())
        except StoreError as error:
            log.warning("could not mark the worker stopped: %s", error)
