"""Hand-offs written in groups: the jobs a worker hands to batch offload at about the
same time (a claim's batch, each in its own attempt) share one store transaction.

    writer = HandOffWriter(store, clock)
    opening = await writer.write(HandOff(lease, lane, intent, budget))   # in a handler

Each attempt waits for its own answer (`BatchStore.batch_hand_off`: its call opened
within its tenant's budget and its job offloaded, or not). The grouping is the
store's `GroupWriter`: a write is not cut off by its attempt's cancellation (a worker
stopping), and its answer still comes, so that a stored hand-off is never left
without its line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from backroom.clock import Clock
from backroom.core.provider_batch import HandOff
from backroom.core.spend import CallOpening
from backroom.store.group_writes import GroupWriter
from backroom.store.protocol import Store


class HandOffWriter:
    """Groups concurrent hand-offs into one `batch_hand_off` each."""

    def __init__(self, store: Callable[[], Store], clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._writer: GroupWriter[HandOff, CallOpening | None] = GroupWriter(self._write_many)

    @property
    def groups(self) -> int:
        """How many writes were made (for tests and benchmarks)."""
        return self._writer.groups

    def write(self, hand_off: HandOff) -> asyncio.Future[CallOpening | None]:
        """The answer to `hand_off` once its group is written: the opening of its call
        (`opened` or refused by the budget), or None if its lease was not held."""
        return self._writer.add(hand_off)

    async def _write_many(self, group: list[HandOff]) -> Sequence[CallOpening | None]:
        return await self._store().batch_hand_off(group, self._clock.now())
