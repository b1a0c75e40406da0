"""Looking after the database itself: its schema version, and pruning old jobs."""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core.job import JobState
from backroom.runtime.retention import prune_finished
from backroom.service.context import AppParts


async def schema_version(app: AppParts) -> int:
    """The newest migration applied to the app's store."""
    return await app.store.schema_version()


async def prune(
    app: AppParts, older_than_ms: int, states: Sequence[JobState], batch: int
) -> tuple[int, int]:
    """Delete jobs in `states` that finished more than `older_than_ms` ago, `batch` per
    transaction; how many, and the cutoff time (ms since the epoch)."""
    cutoff = app.clock.now() - older_than_ms
    return await prune_finished(app.store, cutoff, states, batch), cutoff
