"""Hand-offs written in groups: the jobs a worker hands to batch offload at about the
same time (a claim's batch, each in its own attempt) share one store transaction.

    writer = HandOffWriter(store, clock)
    opening = await writer.write(HandOff(lease, lane, intent, budget))   # in a handler

Each attempt waits for its own answer (`BatchStore.batch_hand_off`: its call opened
within its tenant's budget and its job offloaded, or not). The first hand-off starts
a write on the event loop's next turn; those arriving while it
is under way go in the next one. A write is not cut off by its attempt's
cancellation (a worker stopping): its answer still comes, so that a stored hand-off
is never left without its line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from backroom.clock import Clock
from backroom.core.provider_batch import HandOff
from backroom.core.spend import CallOpening
from backroom.store.protocol import Store

Pending = tuple[HandOff, "asyncio.Future[CallOpening | None]"]


class HandOffWriter:
    """Groups concurrent hand-offs into one `batch_hand_off` each."""

    def __init__(self, store: Callable[[], Store], clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._pending: list[Pending] = []
        self._writing: asyncio.Task[None] | None = None
        self.groups = 0
        """How many writes were made (for tests and benchmarks)."""

    def write(self, hand_off: HandOff) -> asyncio.Future[CallOpening | None]:
        """The answer to `hand_off` once its group is written: the opening of its call
        (`opened` or refused by the budget), or None if its lease was not held."""
        answer: asyncio.Future[CallOpening | None] = asyncio.get_running_loop().create_future()
        self._pending.append((hand_off, answer))
        if self._writing is None or self._writing.done():
            self._writing = asyncio.ensure_future(self._drain())
        return answer

    async def _drain(self) -> None:
        # A task's first step runs on the loop's next turn: attempts ready now reach
        # their hand-off first and join this group.
        while self._pending:
            group, self._pending = self._pending, []
            self.groups += 1
            try:
                answers = await self._store().batch_hand_off(
                    [hand_off for hand_off, _ in group], self._clock.now()
                )
            except Exception as error:  # every waiting attempt sees the store's failure
                for _, answer in group:
                    if not answer.done():
                        answer.set_exception(error)
                continue
            for (_, answer), opening in zip(group, answers, strict=True):
                if not answer.done():
                    answer.set_result(opening)
