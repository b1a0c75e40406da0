"""Streamed output reported a little at a time, so a slow store is not written per token.

A streamed job's partial output is `{"attempt": N, "text": "..."}`: each attempt starts
over from `""` (a retry streams the answer anew), and the attempt number beside the
text tells a poller why it got shorter.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from backroom.clock import Clock
from backroom.core.job import JSON

DeltaCallback = Callable[[str], Awaitable[None]]
"""Called with the whole text streamed so far."""

PROGRESS_INTERVAL_MS = 250


def partial_output(attempt: int, text: str) -> JSON:
    """A streamed job's partial output: `text` so far, streamed by attempt `attempt`."""
    return {"attempt": attempt, "text": text}


class StreamProgress:
    """Collects streamed text and passes it on at most every `interval_ms` of `clock` time.

    The last stretch of text is not reported here: it arrives in the call's result,
    which replaces any partial output.
    """

    def __init__(
        self,
        clock: Clock,
        on_delta: DeltaCallback | None,
        interval_ms: int = PROGRESS_INTERVAL_MS,
    ) -> None:
        self._clock = clock
        self._on_delta = on_delta
        self._interval_ms = interval_ms
        self._parts: list[str] = []
        self._reported_at = clock.now()

    @property
    def text(self) -> str:
        """Everything streamed so far."""
        return "".join(self._parts)

    async def add(self, delta: str) -> None:
        """Take one delta; report the text so far if `interval_ms` has passed since last time."""
        self._parts.append(delta)
        if self._on_delta is None:
            return
        now = self._clock.now()
        if now - self._reported_at >= self._interval_ms:
            self._reported_at = now
            await self._on_delta(self.text)
