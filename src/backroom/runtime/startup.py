"""Opening the store when a long-running process starts: wait for it, never exit.

`backroom worker` and `backroom serve` open their app through `opened_when_reachable`:
while the store cannot be reached (PostgreSQL down or still starting, a port that
refuses), they log one line per try and try again with backoff, as they do when it
goes away later. An error that waiting cannot mend (a wrong password, a database that
does not exist) still ends the process at once.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from backroom.config import redacted_url
from backroom.core.errors import StoreUnavailable
from backroom.store import store_class

if TYPE_CHECKING:
    from backroom.app import App

log = logging.getLogger("backroom.runtime.startup")

FIRST_RETRY_MS = 100
"""The wait after the first failed try; it doubles after each one, up to the cap."""
RETRY_CAP_MS = 5_000
"""The longest wait between two tries (the LISTEN connection's reconnects use the same)."""


@contextlib.asynccontextmanager
async def opened_when_reachable(app: App) -> AsyncIterator[App]:
    """`async with app`, except that a store that cannot be reached yet is waited for."""
    try:
        await _open_waiting(app)
        yield app
    finally:
        await app.close()


async def _open_waiting(app: App) -> None:
    delay_ms = FIRST_RETRY_MS
    while True:
        try:
            await app.open()
            return
        except StoreUnavailable as error:
            log.warning(
                "waiting for the store at %s (%s); trying again in %.1f s",
                redacted_url(app.database_url),
                error,
                delay_ms / 1000,
            )
        await app.clock.sleep(delay_ms)
        delay_ms = min(2 * delay_ms, RETRY_CAP_MS)


def import_store_code(app: App) -> None:
    """Import the code of `app`'s store without opening it: a process that forks workers
    imports it once, before the fork, rather than in each of them."""
    store_class(app.database_url)
