"""The poller: looks at each due provider batch and finishes its jobs when it ends.

Every worker's offload loop polls; `batches_due` hands each due batch to one of them.
An open batch is polled with backoff (`poll_first_ms`, doubling up to `poll_max_ms`);
meanwhile its jobs whose cancellation was asked for are cancelled (their lines'
results later settle only their calls: billed if they ran, see `lines`) and, once
none of its jobs is left, the provider batch is cancelled. An ended batch's lines
finish their jobs (`LineSettler`), each through the fenced `finish` under the token
its line was sent with, so no job is finished twice; a job with no line is sent
back. An intent whose submitter's hold ran out is recovered: found (by name, or by
time and size), its id is stored; not found, its jobs are sent back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from backroom.clock import Clock
from backroom.core.errors import Permanent, Retryable
from backroom.core.outcome import Cancelled
from backroom.core.provider_batch import BatchCounts, BatchPhase, LineEnd, ProviderBatch
from backroom.llm.batch.batcher import ProviderFor
from backroom.llm.batch.config import BatchSettings
from backroom.llm.batch.lines import LineSettler
from backroom.llm.batch.provider import BatchState, BatchStatus, parse_custom_id
from backroom.llm.batch.providers import batch_intent
from backroom.store.protocol import Store

log = logging.getLogger("backroom.llm.batch")

WRITE_CHUNK = 1_000
"""The most outcomes written to the store in one `batch_finish`. A larger batch's
writes overlap the reading of its next lines; a batch of 1,000 is one write (cut into
4 overlapped chunks it wrote 0.85x as fast on a quiet machine: the statements cost
more than the overlap saved)."""
YIELD_EVERY = 64
"""Lines read between two turns of the event loop, so the chunk being written moves on."""
DUE_LIMIT = 10


class Poller:
    """Polls due batches and writes their jobs' ends."""

    def __init__(
        self,
        store: Callable[[], Store],
        provider_for: ProviderFor,
        settings: BatchSettings,
        clock: Clock,
        settler: LineSettler,
    ) -> None:
        self._store = store
        self._provider_for = provider_for
        self._settings = settings
        self._clock = clock
        self._settler = settler

    async def poll_due(self) -> int:
        """Poll every batch due now; how many were looked at."""
        now = self._clock.now()
        due = await self._store().batches_due(now, self._settings.hold_ms, DUE_LIMIT)
        for batch in due:
            try:
                await self._look_at(batch)
            except (Retryable, Permanent) as error:
                log.warning("polling batch %s failed, will retry: %s", batch.name, error)
        return len(due)

    async def _look_at(self, batch: ProviderBatch) -> None:
        if batch.phase is BatchPhase.INTENT:
            await self.recover(batch, "its submitter stopped before storing its id")
            return
        assert batch.provider_batch_id is not None  # an open batch has its id
        status = await self._provider_for(batch.provider).poll(batch.provider_batch_id)
        if status.state.done:
            await self._finish(batch, status)
            return
        delay = self._settings.poll_first_ms * 2 ** min(batch.polls, 20)
        if status.state is BatchState.OPEN and await self._cancel_asked(batch):
            delay = self._settings.poll_first_ms
        now = self._clock.now()
        due = now + min(delay, self._settings.poll_max_ms)
        await self._store().batch_polled(batch.id, status.provider_status, status.counts, due, now)

    async def recover(self, batch: ProviderBatch, reason: str) -> None:
        """Find an intent's batch (`find`) and store its id, or send its jobs back."""
        intent = await batch_intent(self._store(), batch, self._settings.hold_ms)
        provider_batch_id = await self._provider_for(batch.provider).find(intent)
        store, now = self._store(), self._clock.now()
        if provider_batch_id is not None:
            await store.batch_submitted(batch.id, provider_batch_id, now)
            return
        lines = await store.batch_line_jobs(batch.id)
        why = f"batch {batch.name} was never created ({reason}); the job is sent again"
        await self.write([self._settler.unanswered(job, why, now) for job in lines])
        await store.batch_close(batch.id, "never-created", now)

    async def _cancel_asked(self, batch: ProviderBatch) -> bool:
        """Cancel the jobs asked to stop; the provider batch too once none is left
        (True then)."""
        asked, others = await self._store().batch_cancels(batch.id)
        reason = "cancelled while in a provider batch"
        await self.write([LineEnd(lease, Cancelled(reason), settles=False) for lease in asked])
        if others:
            return False
        assert batch.provider_batch_id is not None
        await self._provider_for(batch.provider).cancel(batch.provider_batch_id)
        log.info("cancelling batch %s: every job of it was cancelled", batch.name)
        return True

    async def _finish(self, batch: ProviderBatch, status: BatchStatus) -> None:
        store, provider = self._store(), self._provider_for(batch.provider)
        assert batch.provider_batch_id is not None
        unread = {job.id: job for job in await store.batch_line_jobs(batch.id)}
        ended: list[LineEnd] = []
        writing = _WriteBehind(self.write)
        try:
            async for line in provider.results(batch.provider_batch_id):
                named = parse_custom_id(line.custom_id)
                job = None if named is None else unread.pop(named[0], None)
                if named is None or job is None:
                    continue  # not a line of this batch, or read twice
                ended.append(self._settler.end(job, named[1], line, self._clock.now()))
                if len(ended) >= WRITE_CHUNK:
                    await writing.start(ended)
                    ended = []
                elif len(ended) % YIELD_EVERY == 0:
                    await self._clock.sleep(0)  # a turn of the loop for the write
        finally:
            await writing.done()
        now = self._clock.now()
        why = f"the provider batch ended {status.provider_status} without this job's line"
        ended += [self._settler.unanswered(job, why, now) for job in unread.values()]
        await self.write(ended)
        await store.batch_polled(batch.id, status.provider_status, status.counts, now, now)
        await store.batch_close(batch.id, status.provider_status, now)
        log.info("batch %s ended %s: %s", batch.name, status.provider_status, _tally(status.counts))

    async def write(self, ends: Sequence[LineEnd]) -> None:
        """End these jobs (their calls settled), each only if its lease is still held."""
        if ends:
            await self._store().batch_finish(ends, self._clock.now())


class _WriteBehind:
    """One chunk written while the next is read: parsing lines takes CPU here, writing
    them mostly waits on the database, so the two overlap (one write in flight, so the
    store sees no more concurrency than before)."""

    def __init__(self, write: Callable[[Sequence[LineEnd]], Awaitable[None]]) -> None:
        self._write = write
        self._pending: asyncio.Task[None] | None = None

    async def start(self, ends: Sequence[LineEnd]) -> None:
        """Write `ends` once the chunk before them is written (its error raised here)."""
        await self.done()
        self._pending = asyncio.ensure_future(self._write(ends))

    async def done(self) -> None:
        """Wait for the chunk in flight, if any."""
        pending, self._pending = self._pending, None
        if pending is not None:
            await pending


def _tally(counts: BatchCounts) -> str:
    return f"{counts.succeeded} succeeded, {counts.failed} failed of {counts.total}"
