"""The seam between backroom's batch offload and a provider's batch API.

A provider that can run requests in bulk at its batch price implements
`BatchProvider`; the batcher and the poller (`backroom.llm.batch`) only ever talk to
it through this protocol, so OpenAI's Batch API and Anthropic's Message Batches look
the same to them:

    lines = [BatchLine(custom_id("42", 1), request), ...]      # within provider.limits
    batch_id = await provider.submit(name, lines)               # one provider batch
    batch_id = await provider.find(intent)                      # after a crash: or None
    status = await provider.poll(batch_id)                      # state and counts
    async for line in provider.results(batch_id):               # once status.ended
        ...                                                     # LineResult per line
    await provider.cancel(batch_id)

A line is the neutral `LLMRequest` an online call would send; the adapter builds the
provider's body from it, exactly as its online call would, and turns each line's
answer into the same `LLMResult` (usage included; the caller prices it at the batch
price). A line's failure is classified through the provider's own error map, as an
online call's would be: `Retryable` (the job goes into a later batch, or online) or
`Permanent` (the job fails). Lines that never ran (the batch expired or was
cancelled) come back as `LineOutcome.UNFINISHED`: their jobs are sent back.

Every method raises `Retryable` or `Permanent` when the provider itself cannot be
reached or refuses the call, never an SDK exception.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from backroom.core.errors import Permanent, Retryable
from backroom.core.provider_batch import BatchCounts
from backroom.llm.request import LLMRequest, LLMResult

MEBIBYTE = 1024 * 1024

__all__ = ["BatchCounts", "BatchIntent", "BatchLimits", "BatchLine", "BatchProvider", "BatchState"]
__all__ += ["BatchStatus", "LineOutcome", "LineResult", "custom_id", "parse_custom_id"]


@dataclass(frozen=True, slots=True)
class BatchLimits:
    """The most one provider batch may hold: requests, and bytes of its upload."""

    max_requests: int
    max_bytes: int


OPENAI_BATCH_LIMITS = BatchLimits(max_requests=50_000, max_bytes=200 * MEBIBYTE)
"""OpenAI's Batch API: 50,000 requests and 200 MB per input file."""
ANTHROPIC_BATCH_LIMITS = BatchLimits(max_requests=100_000, max_bytes=256 * MEBIBYTE)
"""Anthropic's Message Batches: 100,000 requests and 256 MB per batch."""


def custom_id(job_id: int, attempt: int) -> str:
    """The `custom_id` of a job's line: its id and attempt, in both providers' alphabet.

    >>> custom_id(42, 3)
    'job-42-3'
    """
    return f"job-{job_id}-{attempt}"


def parse_custom_id(value: str) -> tuple[int, int] | None:
    """The (job id, attempt) a `custom_id` names, or None for one backroom never wrote.

    >>> parse_custom_id("job-42-3")
    (42, 3)
    >>> parse_custom_id("other") is None
    True
    """
    prefix, _, rest = value.partition("-")
    job, _, attempt = rest.partition("-")
    if prefix != "job" or not job.isdigit() or not attempt.isdigit():
        return None
    return int(job), int(attempt)


@dataclass(frozen=True, slots=True)
class BatchLine:
    """One request of a batch: the call an online attempt would make, and its id."""

    custom_id: str
    request: LLMRequest


@dataclass(frozen=True, slots=True)
class BatchIntent:
    """What backroom stored before sending a batch: enough to recognise it after a crash.

    `name` is unique per backroom batch (OpenAI's metadata carries it); a provider
    whose batches carry no metadata (Anthropic) recognises its batch by when it was
    created and how many requests it holds: at or after `stored_at` (ms, when the
    intent was stored, before the submit) and by `created_by` (the submitter's hold ran
    out then), with `requests` lines, and not one of `adopted`, the provider ids other
    stored batches already hold.
    """

    name: str
    stored_at: int
    requests: int
    created_by: int
    adopted: frozenset[str] = frozenset()


class BatchState(StrEnum):
    """Where a provider batch is, in words common to every provider.

    OPEN      accepted and not ended (validating, in progress, finalizing)
    ENDED     every line has a result (OpenAI `completed`, Anthropic `ended`)
    EXPIRED   the provider gave up after its window; finished lines have results
    CANCELLING  a cancel was asked for and is under way
    CANCELLED the batch was cancelled; finished lines have results
    FAILED    the provider refused the batch as a whole (its file did not validate)
    """

    OPEN = "open"
    ENDED = "ended"
    EXPIRED = "expired"
    CANCELLING = "cancelling"
    CANCELLED = "cancelled"
    FAILED = "failed"

    @property
    def done(self) -> bool:
        """Whether the batch will change no more: its results can be read."""
        return self in _DONE


_DONE = frozenset({BatchState.ENDED, BatchState.EXPIRED, BatchState.CANCELLED, BatchState.FAILED})


@dataclass(frozen=True, slots=True)
class BatchStatus:
    """What one poll said: the batch's state, counts, and the provider's own word."""

    batch_id: str
    state: BatchState
    counts: BatchCounts
    provider_status: str


class LineOutcome(StrEnum):
    """How one line of an ended batch came out."""

    SUCCEEDED = "succeeded"
    ERRORED = "errored"
    UNFINISHED = "unfinished"


@dataclass(frozen=True, slots=True)
class LineResult:
    """One line's answer: a result (SUCCEEDED), an error (ERRORED), or neither.

    UNFINISHED lines (expired or cancelled before they ran) carry neither: their
    jobs go back to be sent again.
    """

    custom_id: str
    outcome: LineOutcome
    result: LLMResult | None = None
    error: Retryable | Permanent | None = None


class BatchProvider(Protocol):
    """A provider's batch API, as the batcher and poller use it."""

    @property
    def limits(self) -> BatchLimits:
        """The most one batch may hold."""

    def line_bytes(self, line: BatchLine) -> int:
        """How many bytes `line` adds to the batch's upload (to stay within limits)."""

    async def submit(self, name: str, lines: Sequence[BatchLine]) -> str:
        """Create one batch of `lines` named `name` (in its metadata); its provider id.

        `name` is unique per backroom batch: `find` returns this batch later.
        """

    async def find(self, intent: BatchIntent) -> str | None:
        """The id of the batch submitted for `intent`, if the provider has one (None: it
        was never created, and its jobs may be sent again)."""

    async def poll(self, batch_id: str) -> BatchStatus:
        """The batch's state and counts now."""

    def results(self, batch_id: str) -> AsyncIterator[LineResult]:
        """Every line's result of a done batch, in any order, each once."""

    async def cancel(self, batch_id: str) -> BatchStatus:
        """Ask the provider to cancel the batch; its state after the ask."""
