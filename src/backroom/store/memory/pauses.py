"""Paused queues and lanes in memory (`MemoryPauses`); the claim reads `tables.pauses`."""

from __future__ import annotations

from backroom.store.memory.part import MemoryPart
from backroom.store.records import Pause, PauseKind


class MemoryPauses(MemoryPart):
    """Queues and lanes paused for every worker (see `QueueStore`)."""

    async def pause(self, kind: PauseKind, name: str, now: int) -> Pause:
        """Pause the queue or lane `name`; the pause (the first one, if it was paused)."""
        paused_at = self._tables.pauses.setdefault((kind, name), now)
        return Pause(kind, name, paused_at)

    async def resume(self, kind: PauseKind, name: str) -> bool:
        """Resume the queue or lane `name`; its due jobs are new work. False if not paused."""
        if self._tables.pauses.pop((kind, name), None) is None:
            return False
        self._new_work.announce()
        return True

    async def pauses(self) -> list[Pause]:
        """Every pause, by kind and name."""
        return [
            Pause(kind, name, paused_at)
            for (kind, name), paused_at in sorted(self._tables.pauses.items())
        ]
