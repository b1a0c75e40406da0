"""What the dashboard's overview shows: each queue's depth, oldest wait and recent
throughput, the workers alive (idle ones too, from the registry their heartbeats
refresh) with the jobs each runs, and the lanes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from backroom.service.context import AppParts
from backroom.service.workers import WorkerView, workers
from backroom.store.insight_protocol import FinishedCount, QueueDepth
from backroom.store.records import LaneStatus, PauseKind

MINUTE_MS = 60_000
HOUR_MS = 60 * MINUTE_MS
DAY_MS = 24 * HOUR_MS


@dataclass(frozen=True, slots=True)
class Slot:
    """The jobs of one queue that ended in one time slot, by outcome."""

    start: int
    succeeded: int = 0
    failed: int = 0
    cancelled: int = 0

    @property
    def finished(self) -> int:
        """Every job that ended in the slot."""
        return self.succeeded + self.failed + self.cancelled


@dataclass(frozen=True, slots=True)
class Series:
    """A queue's finishes over a window, slot by slot, oldest first."""

    slot_ms: int
    slots: tuple[Slot, ...]

    @property
    def finished(self) -> int:
        """Every job that ended in the window."""
        return sum(slot.finished for slot in self.slots)

    @property
    def failed(self) -> int:
        """The jobs that failed for good in the window."""
        return sum(slot.failed for slot in self.slots)

    @property
    def failure_rate(self) -> float:
        """The share of the window's finished jobs that failed (0 when none finished)."""
        return self.failed / self.finished if self.finished else 0.0


@dataclass(frozen=True, slots=True)
class QueueSummary:
    """One queue: waiting and running jobs, the oldest wait, the last hour and day."""

    queue: str
    depth: QueueDepth
    oldest_age_ms: int | None
    hour: Series
    day: Series


@dataclass(frozen=True, slots=True)
class Overview:
    """The overview as of `now`, for one tenant or every tenant (`tenant=None`).

    `lanes` is None for a caller who is not an admin (lanes span tenants), and such a
    caller sees only the workers running its jobs (an idle worker serves every tenant).
    """

    now: int
    tenant: str | None
    queues: tuple[QueueSummary, ...]
    workers: tuple[WorkerView, ...]
    lanes: tuple[LaneStatus, ...] | None = field(default=None)
    paused_queues: dict[str, int] = field(default_factory=dict)
    """Queues a person paused, with when (ms since the epoch)."""


def series(counts: list[FinishedCount], queue: str, since: int, slot_ms: int, slots: int) -> Series:
    """The finishes of `queue` among `counts`, as `slots` slots of `slot_ms` from `since`."""
    by_start: dict[int, dict[str, int]] = {}
    for count in counts:
        if count.queue == queue:
            by_start.setdefault(count.slot_start, {})[str(count.state)] = count.count
    return Series(
        slot_ms,
        tuple(
            Slot(start, **by_start.get(start, {}))
            for start in range(since, since + slots * slot_ms, slot_ms)
        ),
    )


async def overview(app: AppParts, tenant: str | None, admin: bool) -> Overview:
    """The overview of `tenant`'s queues (None: every tenant's), as `admin` may see it."""
    now = app.clock.now()
    depths = {depth.queue: depth for depth in await app.store.queue_depths(now, tenant)}
    hour_since, day_since = now - HOUR_MS, now - DAY_MS
    hour = await app.store.finished_counts(hour_since, 5 * MINUTE_MS, tenant)
    day = await app.store.finished_counts(day_since, HOUR_MS, tenant)
    paused = {
        pause.name: pause.paused_at
        for pause in await app.store.pauses()
        if pause.kind is PauseKind.QUEUE
    }
    names = sorted(set(depths) | {count.queue for count in day} | set(paused))
    queues = tuple(
        QueueSummary(
            name,
            depths.get(name, QueueDepth(name, 0, 0, None)),
            None
            if (due := depths.get(name)) is None or due.oldest_due_at is None
            else now - due.oldest_due_at,
            series(hour, name, hour_since, 5 * MINUTE_MS, 12),
            series(day, name, day_since, HOUR_MS, 24),
        )
        for name in names
    )
    alive = await workers(app, tenant, stopped=False)
    if not admin:
        alive = tuple(view for view in alive if view.jobs)
    lanes = tuple(await app.store.lanes(now)) if admin else None
    return Overview(now, tenant, queues, alive, lanes, paused)
