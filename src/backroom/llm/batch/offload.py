"""Batch offload in one worker process: which jobs go, the batcher, the poller, their loop.

    offload = BatchOffload(config, settings, store, providers, clock, retry)
    if offload.offloads(job, job_input, provider, lane):
        call, budget = await ledger.prepare(job, job_input, provider, model, request, now)
        await offload.hand_off(job, lane, provider.name, call, budget)
        raise Offloaded(...)          # the worker lets go of the job, storing nothing
    ...
    await offload.run()               # beside the worker's loops (a task service)

The loop wakes every `tick_ms` (or at once when a lane's batch is full): it sends the
batches that are due (`Batcher`), polls the batches that are due (`Poller`), and sends
back the jobs whose lines were handed to a batcher that stopped before it sent them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from backroom.clock import Clock, sleep_unless
from backroom.core.errors import Permanent, StoreError
from backroom.core.job import Job
from backroom.core.retry import RetryPolicy
from backroom.core.spend import BudgetWindow
from backroom.llm.batch.batcher import Batcher
from backroom.llm.batch.config import BatchSettings
from backroom.llm.batch.lines import LineSettler
from backroom.llm.batch.poller import DUE_LIMIT, Poller
from backroom.llm.batch.provider import BatchProvider
from backroom.llm.batch.providers import batch_capable, batch_provider
from backroom.llm.config import LLMConfig
from backroom.llm.providers.registry import Providers
from backroom.llm.settings import ProviderConfig
from backroom.llm.spend import OpenedCall
from backroom.llm.task_input import RespondInput
from backroom.store.protocol import Store

log = logging.getLogger("backroom.llm.batch")

OFFLOAD_ASKED = "batch"
"""The `offload` value of an input that asks for a batch."""
MAX_TICK_MS = 1_000
MIN_TICK_MS = 20
STRAY_LIMIT = 1_000


class BatchOffload:
    """The batcher and poller of one process, and the loop that drives them."""

    def __init__(
        self,
        config: LLMConfig,
        settings: BatchSettings,
        store: Callable[[], Store],
        providers: Providers,
        clock: Clock,
        retry: RetryPolicy,
    ) -> None:
        self.settings = settings
        self._config = config
        self._store = store
        self._registry = providers
        self._clock = clock
        self._providers: dict[str, BatchProvider] = {}
        self.settler = LineSettler(config, retry)
        self.poller = Poller(store, self.provider_for, settings, clock, self.settler)
        self.batcher = Batcher(store, self.provider_for, settings, clock, self.poller.recover)
        self._wake = asyncio.Event()

    def provider_for(self, name: str) -> BatchProvider:
        """The batch API of the configured provider `name` (`Permanent` if it has none:
        its config changed while its jobs were in a batch)."""
        if name not in self._providers:
            made = batch_provider(self._registry.get(self._config.provider(name)), self._clock)
            if made is None:
                raise Permanent(f"LLM provider {name!r} has no batch API that backroom uses")
            self._providers[name] = made
        return self._providers[name]

    def offloads(
        self, job: Job, job_input: RespondInput, provider: ProviderConfig, lane: str
    ) -> bool:
        """Whether this attempt of `job` goes to a provider batch (see `batch.config`)."""
        if job_input.stream or not batch_capable(provider):
            return False
        if job.attempt > 1 and job.attempts_left == 0:
            return False  # a retried job's last attempt is called online
        asked = job_input.offload == OFFLOAD_ASKED
        return self.settings.offloads(lane, job.queue, asked)

    async def hand_off(
        self, job: Job, lane: str, provider: str, call: OpenedCall, budget: BudgetWindow | None
    ) -> None:
        """Open `job`'s call, store the job as offloaded and queue its line for its
        lane's next batch (`Batcher.hand_off`)."""
        await self.batcher.hand_off(job, lane, provider, call, budget)
        if self.batcher.full:
            self._wake.set()

    @property
    def tick_ms(self) -> int:
        """How often the loop looks for due batches."""
        settings = self.settings
        tick = min(MAX_TICK_MS, settings.flush_after_ms, settings.poll_first_ms)
        return max(MIN_TICK_MS, tick)

    async def run(self) -> None:
        """Send, poll and recover batches until cancelled.

        A round under way when the loop is cancelled (the worker stops) ends first: no
        store or provider call is cut off half-way.
        """
        while True:
            round_ = asyncio.ensure_future(self._guarded_tick())
            try:
                await asyncio.shield(round_)
            except asyncio.CancelledError:
                await round_
                raise
            await sleep_unless(self._clock, self.tick_ms, self._wake)
            self._wake.clear()

    async def _guarded_tick(self) -> None:
        try:
            await self.tick()
        except StoreError as error:
            log.warning("batch offload: the store failed, retrying: %s", error)

    async def tick(self) -> None:
        """Send due batches, poll due ones, send back stray jobs: one round."""
        now = self._clock.now()
        await self.batcher.flush_due(now)
        while await self.poller.poll_due() == DUE_LIMIT:
            pass
        await self._send_back_strays(now)

    async def _send_back_strays(self, now: int) -> None:
        handed_before = now - self.settings.hold_ms
        jobs = await self._store().stray_jobs(handed_before, STRAY_LIMIT)
        mine = self.batcher.holds()
        why = "its batcher stopped before sending its batch; the job is sent again"
        ended = [self.settler.sent_back(job, why, now) for job in jobs if job.id not in mine]
        await self.poller.write(ended)

    async def aclose(self) -> None:
        """Forget the batch providers (their clients are the task's, closed with it)."""
        self._providers.clear()
