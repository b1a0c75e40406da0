"""The part of the store protocol behind batch offload (`BatchStore`).

A running job handed to batch offload (`offload`) keeps its state and lease token
but loses its lease's expiry and its worker: the lease reaper never takes it back and
no heartbeat extends it. Its line waits, unbatched, until a batcher stores a batch
intent holding it (`batch_create`), then the provider's id (`batch_submitted`). A
poller takes due batches (`batches_due`), records what it saw (`batch_polled`),
ends each job under the token its line names (`batch_finish`: its call settled and
its outcome applied as the fenced `LeaseStore.finish` does), and closes the batch
(`batch_close`). A line is live while its job runs under the line's token: a job
finished or cancelled meanwhile drops out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from backroom.core.job import Job, Lease
from backroom.core.provider_batch import BatchCounts, HandOff, LineEnd, LineJob, ProviderBatch
from backroom.core.spend import CallOpening


class BatchStore(Protocol):
    """Provider batches and the offloaded jobs they hold."""

    async def offload(self, lease: Lease, lane: str, now: int) -> bool:
        """Hand the job `lease` holds to batch offload: it stays running with no lease
        expiry and no worker, its line waiting for a batch of `lane`. False, changing
        nothing, if the lease is not held."""

    async def batch_hand_off(
        self, hand_offs: Sequence[HandOff], now: int
    ) -> list[CallOpening | None]:
        """Hand held jobs to batch offload, in one transaction: each one's call opened
        as `call_open` does (under its tenant's budget, the group's calls fitted in
        order), then the job offloaded as `offload` does. For each: None if its lease
        is not held, an opening not `opened` if the budget could not hold its call
        (nothing written for either), else the opening."""

    async def batch_create(
        self,
        name: str,
        provider: str,
        lane: str,
        leases: Sequence[Lease],
        now: int,
        hold_ms: int,
    ) -> tuple[ProviderBatch, list[Lease]]:
        """Store the intent of a batch `name` holding those of `leases` whose lines
        still wait for a batch, in one transaction; the batch and the leases it holds.

        The caller holds the intent until `now + hold_ms`: then `batches_due` hands it
        to whoever asks, to recover. Raises `StoreError` if `name` is taken.
        """

    async def batch_submitted(self, batch_id: int, provider_batch_id: str, now: int) -> None:
        """Store the provider's id of an intent: the batch is open, due for a poll now."""

    async def batch_polled(
        self, batch_id: int, status: str, counts: BatchCounts, due_at: int, now: int
    ) -> None:
        """Store what a poll saw, and when the batch is next due."""

    async def batch_finish(self, ends: Sequence[LineEnd], now: int) -> list[bool]:
        """End offloaded jobs, in one transaction: each call that `settles` is closed
        (its usage stored) if still open, then each outcome applied, as `finish` does,
        if its lease is still held (True where applied; an end without an outcome only
        settles its call)."""

    async def batch_close(self, batch_id: int, status: str, now: int) -> None:
        """Close the batch with its last `status`; its lines go with it."""

    async def batches_due(self, now: int, hold_ms: int, limit: int) -> list[ProviderBatch]:
        """Up to `limit` batches not closed that are due, each taken by pushing its
        `due_at` to `now + hold_ms` (so concurrent pollers take different ones)."""

    async def provider_batches(self, limit: int = 100) -> list[ProviderBatch]:
        """The batches not closed, oldest first."""

    async def batch_cancels(self, batch_id: int) -> tuple[list[Lease], bool]:
        """The leases of the batch's live jobs (running under their lines' tokens)
        whose cancellation was asked for, and whether any other live job is left.
        Read without the batch's other jobs: a poll of an open batch asks this."""

    async def batch_line_jobs(self, batch_id: int) -> list[LineJob]:
        """Each line of the batch with its job, in whatever state the job is now
        (`LineJob.waiting`: the line is live), as the write-back reads it."""

    async def stray_jobs(self, handed_before: int, limit: int) -> list[Job]:
        """Running jobs whose line was handed before `handed_before` and never joined a
        batch (its batcher stopped first); lines of jobs no longer running are dropped."""

    async def adopted_batch_ids(self, provider: str, since: int) -> set[str]:
        """The provider ids stored by batches of `provider` whose intents were stored
        at or after `since`, closed or not: a recovered intent must not adopt them."""

    async def job_batch(self, job_id: int) -> ProviderBatch | None:
        """The batch that holds the running job's line, or None."""
