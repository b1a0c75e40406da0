"""The batcher: gathers a lane's offloaded jobs into one provider batch and sends it.

    await batcher.hand_off(job, lane, provider, call, budget)  # from the job's handler
    await batcher.flush_due(now)                            # from the offload loop

A handed-off job is stored first, its call's budget reserved, with the other jobs
handed off at the same time (`BatchStore.batch_hand_off`: running, no lease expiry,
no worker) and its line kept here until its lane's batch is sent: at `flush_jobs` lines,
at the provider's limits (requests, bytes), or when the oldest has waited
`flush_after_ms`. Sending stores the batch's intent (its unique name and the jobs it
holds) before anything is uploaded, then submits it, then stores the provider's id.
If the submit fails, the batch is looked up by its name (`find`): found, its id is
stored; not found, its jobs are sent back (nothing of them was sent). A crash
anywhere in between leaves the intent, which a poller recovers the same way once the
submitter's hold has run out (`poller`), so no request goes out in two batches.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from backroom.clock import Clock
from backroom.core.errors import LeaseLost, Permanent, Retryable
from backroom.core.job import Job, Lease
from backroom.core.provider_batch import HandOff, ProviderBatch
from backroom.core.spend import BudgetWindow
from backroom.llm.batch.config import BatchSettings
from backroom.llm.batch.hand_offs import HandOffWriter
from backroom.llm.batch.provider import BatchLine, BatchProvider, custom_id
from backroom.llm.request import LLMRequest
from backroom.llm.spend import OpenedCall, budget_refusal
from backroom.store.protocol import Store

log = logging.getLogger("backroom.llm.batch")

ProviderFor = Callable[[str], BatchProvider]
"""The batch provider of a configured provider, by name."""


@dataclass(frozen=True, slots=True)
class WaitingLine:
    """A handed-off job's line, waiting for its lane's batch."""

    lease: Lease
    line: BatchLine
    size: int
    handed_at: int


@dataclass(slots=True)
class LaneLines:
    """The lines one (provider, lane) has waiting, and their bytes."""

    lines: list[WaitingLine] = field(default_factory=list)
    size: int = 0


def batch_name() -> str:
    """A new batch's unique name, as its metadata carries it."""
    return f"backroom-{uuid.uuid4().hex}"


class Batcher:
    """The lines handed off in this process, by (provider, lane), and their sending."""

    def __init__(
        self,
        store: Callable[[], Store],
        provider_for: ProviderFor,
        settings: BatchSettings,
        clock: Clock,
        recover: Callable[[ProviderBatch, str], Awaitable[None]],
    ) -> None:
        self._store = store
        self._provider_for = provider_for
        self._settings = settings
        self._clock = clock
        self._recover = recover
        self._waiting: dict[tuple[str, str], LaneLines] = {}
        self._writer = HandOffWriter(store, clock)
        self.full = False
        """Set when a lane holds a full batch: the loop should flush now."""

    def holds(self) -> set[int]:
        """The ids of the jobs whose lines wait here."""
        return {line.lease.job_id for lane in self._waiting.values() for line in lane.lines}

    async def hand_off(
        self, job: Job, lane: str, provider: str, call: OpenedCall, budget: BudgetWindow | None
    ) -> None:
        """Open `job`'s call and store the job as offloaded (with the other hand-offs
        under way, `HandOffWriter`), then keep its line. Raises `LeaseLost` if the job
        is not held, `BudgetRefused` if its tenant's budget cannot hold its call.

        The line is kept once the write is stored, even if the attempt is stopped
        meanwhile (a shutdown): a stored line is never left without its batcher.
        """
        write = self._writer.write(HandOff(job.lease, lane, call.intent, budget))
        try:
            opening = await asyncio.shield(write)
        except asyncio.CancelledError:
            opening = await write
            if opening is not None and opening.opened:
                self._keep(job, lane, provider, call.request)
            raise
        if opening is None:
            raise LeaseLost(f"job {job.id} is no longer held under lease {job.lease_token}")
        if not opening.opened:
            assert budget is not None  # only a budget refuses a call
            raise budget_refusal(job, budget, opening, call.intent.reserved_pico_usd or 0)
        self._keep(job, lane, provider, call.request)

    def _keep(self, job: Job, lane: str, provider: str, request: LLMRequest) -> None:
        # Its wait starts now, once stored: a slow write does not make it due at once.
        now = self._clock.now()
        line = BatchLine(custom_id(job.id, job.attempt), request)
        size = self._provider_for(provider).line_bytes(line)
        waiting = self._waiting.setdefault((provider, lane), LaneLines())
        waiting.lines.append(WaitingLine(job.lease, line, size, now))
        waiting.size += size
        if self._is_full(provider, waiting):
            self.full = True

    def _is_full(self, provider: str, waiting: LaneLines) -> bool:
        limits = self._provider_for(provider).limits
        count = min(self._settings.flush_jobs, limits.max_requests)
        return len(waiting.lines) >= count or waiting.size >= limits.max_bytes * 0.9

    async def flush_due(self, now: int) -> int:
        """Send every lane's batch that is full or has waited long enough; how many."""
        self.full = False
        sent = 0
        for key in list(self._waiting):
            waiting = self._waiting[key]
            if waiting.lines and now - waiting.lines[0].handed_at >= self._settings.flush_after_ms:
                del self._waiting[key]  # lines handed off while these are sent wait anew
                while waiting.lines:
                    await self._send(key, self._take(key[0], waiting))
                    sent += 1
                continue
            while self._is_full(key[0], waiting):
                await self._send(key, self._take(key[0], waiting))
                sent += 1
        return sent

    def _take(self, provider: str, waiting: LaneLines) -> list[WaitingLine]:
        """The first lines of `waiting` that fit one batch, taken out of it."""
        limits = self._provider_for(provider).limits
        count = min(self._settings.flush_jobs, limits.max_requests)
        taken: list[WaitingLine] = []
        size = 0
        for line in waiting.lines[:count]:
            if taken and size + line.size > limits.max_bytes:
                break
            taken.append(line)
            size += line.size
        del waiting.lines[: len(taken)]
        waiting.size -= size
        return taken

    async def _send(self, key: tuple[str, str], lines: list[WaitingLine]) -> None:
        provider_name, lane = key
        provider = self._provider_for(provider_name)
        store, name, now = self._store(), batch_name(), self._clock.now()
        leases = [line.lease for line in lines]
        batch, kept = await store.batch_create(
            name, provider_name, lane, leases, now, self._settings.hold_ms
        )
        held = set(kept)
        sent = [line.line for line in lines if line.lease in held]
        if not sent:
            await store.batch_close(batch.id, "empty", now)
            return
        try:
            provider_batch_id = await provider.submit(name, sent)
        except (Retryable, Permanent) as error:
            log.warning("sending batch %s of %d jobs failed: %s", name, len(sent), error)
            await self._recover(batch, str(error))
            return
        await store.batch_submitted(batch.id, provider_batch_id, self._clock.now())
        log.info("sent batch %s (%s): %d jobs of lane %s", name, provider_batch_id, len(sent), lane)
