"""Finding a Message Batch again after a crash: Anthropic's batches carry no metadata.

A batcher stores its batch's intent (`BatchIntent`: when, how many requests) before it
sends the batch, and the batch's id after. A crash in between leaves an intent whose
batch may or may not exist. `find_batch` recognises it among the provider's batches:

1. A candidate was created between `stored_at` and `created_by` (the submitter's hold),
   give or take `CLOCK_SKEW_MS` between backroom's clock and Anthropic's, holds exactly
   `requests` requests, and is not already adopted by another stored batch.
2. An ended candidate shows its first line: its custom id carries the tag of the name
   of the batch that sent it (`name_tag`). It is this intent's batch (adopted at once)
   or not (dropped): no guess.
3. Of the candidates still in progress (their lines are not visible yet), the one
   created first is adopted. None left: the batch was never created, and the caller
   sends its jobs again.

Rule 3 pairs intents and batches in the order each was made: the poller recovers
intents oldest first, each adopting the earliest batch no other has adopted, as one
batcher sends its batches one after another. It can only guess wrong when another
batch of the same size, created within the intent's window, has no stored id either
(its submitter died too, or is still sending). The wrong pair shows when the batch
ends, as its lines name their jobs and attempts: jobs of the intent with no line of
their own are sent again, lines of jobs it does not hold are billed and discarded
(`Poller`). No job is ever finished twice, and no batch is created again for an
intent whose batch exists: a batch found is always adopted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anthropic
from anthropic.types.messages import MessageBatch

from backroom.llm.batch.provider import BatchIntent

CLOCK_SKEW_MS = 60_000
"""How far backroom's clock and Anthropic's may disagree."""
FIND_LIMIT = 1_000
"""How many of the newest batches `find_batch` looks through at most."""

TaggedAs = Callable[[str], Awaitable[bool | None]]
"""Whether a batch's first line carries the intent's tag (None: no line visible)."""


@dataclass(frozen=True, slots=True, order=True)
class Candidate:
    """A batch that may be the intent's: when it was created, its id, whether it ended."""

    created_at: int
    batch_id: str
    ended: bool


def created_ms(batch: MessageBatch) -> int:
    """When `batch` was created, in ms since the epoch."""
    return int(batch.created_at.timestamp() * 1000)


def request_count(batch: MessageBatch) -> int:
    """How many requests `batch` holds, whatever became of them."""
    counts = batch.request_counts
    return counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired


def candidate(batch: MessageBatch, intent: BatchIntent) -> Candidate | None:
    """`batch` as a candidate for `intent` (rule 1), or None."""
    created = created_ms(batch)
    within = intent.stored_at - CLOCK_SKEW_MS <= created <= intent.created_by + CLOCK_SKEW_MS
    if not within or request_count(batch) != intent.requests or batch.id in intent.adopted:
        return None
    return Candidate(created, batch.id, batch.processing_status == "ended")


async def candidates(client: anthropic.AsyncAnthropic, intent: BatchIntent) -> list[Candidate]:
    """The candidates among the newest batches, oldest first (the list is newest first:
    it is read until a batch older than the intent's window)."""
    found: list[Candidate] = []
    seen = 0
    async for batch in client.messages.batches.list(limit=100):
        seen += 1
        if seen > FIND_LIMIT or created_ms(batch) < intent.stored_at - CLOCK_SKEW_MS:
            break
        match = candidate(batch, intent)
        if match is not None:
            found.append(match)
    return sorted(found)


async def find_batch(
    client: anthropic.AsyncAnthropic, intent: BatchIntent, tagged: TaggedAs
) -> str | None:
    """The id of the intent's batch by rules 1 to 3 (see the module), or None."""
    unseen: list[Candidate] = []
    for match in await candidates(client, intent):
        mine = await tagged(match.batch_id) if match.ended else None
        if mine:
            return match.batch_id
        if mine is None:
            unseen.append(match)
    return unseen[0].batch_id if unseen else None
