"""A clock for integration tests that moves only when the test moves it."""

from __future__ import annotations


class ManualClock:
    """A clock that moves only when the test moves it (`ms`)."""

    def __init__(self, ms: int = 1_700_000_000_000) -> None:
        self.ms = ms

    def now(self) -> int:
        """The current test time in milliseconds."""
        return self.ms

    async def sleep(self, ms: float) -> None:
        """Sleeping moves the clock (nothing here sleeps)."""
        self.ms += round(ms)
