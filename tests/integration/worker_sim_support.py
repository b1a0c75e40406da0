"""The worker under simulated time: an app on an in-memory SQLite store, and a runner."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Any

from backroom import App, Jitter, RetryPolicy, Schedule, SimClock
from backroom.store.sqlite.store import SqliteStore

START = 1_700_000_000_000
EXACT = RetryPolicy(max_attempts=3, schedule=Schedule.EXPONENTIAL, base_ms=1000, jitter=Jitter.NONE)


def make_app(clock: SimClock, retry: RetryPolicy = EXACT, seed: int = 7) -> App:
    """An app on a fresh in-memory SQLite store, on `clock`, with a seeded random source."""
    store = SqliteStore.from_url("sqlite://:memory:")
    return App(store=store, clock=clock, retry=retry, rng=random.Random(seed))


def run(clock: SimClock, app: App, scenario: Callable[[], Awaitable[Any]]) -> Any:
    """Run `scenario` inside the open `app` on the simulated `clock`; what it returns."""

    async def main() -> Any:
        async with app:
            return await scenario()

    return clock.run(main())
