"""The event feed: every stored transition of every job, in one order that readers follow.

Each transition a store writes is also an event of the feed, in the same transaction, so
the feed is an outbox: nothing that happened to a job can be missed by a reader that keeps
its place. A place is a `FeedPosition`. On SQLite (one writer at a time) the event id
alone orders the feed. On PostgreSQL ids are handed out before commit, so a transaction
that took id 10 may commit after one that took id 11; a reader that had moved past 11
would then skip 10. There the position leads with the writing transaction's id and a
reader sees only transactions older than every one still running (the snapshot's xmin),
so nothing can commit behind it.

Events are named for what they mean to a client:

>>> event_type(None, "queued", "")
'job.submitted'
>>> event_type("running", "queued", "")
'job.requeued'
>>> FeedPosition.parse("12-345")
FeedPosition(commit=12, event_id=345)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from backroom.core.job import JobState

PROGRESS_REASON = "progress"
"""The reason of a progress event: a running job that reported progress or output."""

TERMINAL_TYPES = frozenset({"job.succeeded", "job.failed", "job.cancelled"})
"""The event types after which a job changes no more (unless a failed job is redriven)."""

EVENT_TYPES = (
    "job.submitted",
    "job.started",
    "job.progress",
    "job.requeued",
    "job.succeeded",
    "job.failed",
    "job.cancelled",
    "job.redriven",
)
"""Every event type, in roughly the order a job meets them."""


def event_type(from_state: JobState | None, to_state: JobState, reason: str) -> str:
    """The client-facing name of a transition from `from_state` to `to_state`."""
    if from_state is None:
        return "job.submitted"
    if to_state == "running":
        return "job.progress" if reason == PROGRESS_REASON else "job.started"
    if to_state == "queued":
        # From running: a retry, a deferral or a hand-back at shutdown; all queue it again.
        return "job.redriven" if from_state == "failed" else "job.requeued"
    return f"job.{to_state}"


@dataclass(frozen=True, slots=True, order=True)
class FeedPosition:
    """A place in the feed: after the event `event_id` of transaction `commit`.

    `commit` is PostgreSQL's transaction id (`xid8`); single-writer stores leave it 0.
    Its text form, `COMMIT-ID`, is what clients see as an SSE event id.
    """

    commit: int
    event_id: int

    def token(self) -> str:
        """The position as text: `COMMIT-ID`."""
        return f"{self.commit}-{self.event_id}"

    @classmethod
    def parse(cls, token: str) -> FeedPosition:
        """Read a position from `token`, or raise `ValueError` naming the expected form."""
        commit, dash, event_id = token.strip().partition("-")
        if dash and commit.isdigit() and event_id.isdigit() and len(token) <= 40:
            return cls(int(commit), int(event_id))
        raise ValueError(f"not a feed position: {token[:40]!r} (expected COMMIT-ID)")


START = FeedPosition(0, 0)
"""Before the first event."""

DELIVERABLE_SCAN = 10
"""How many events a deliverable read (`FeedFilter.deliverable`) may scan for each one
it may return: it returns at most `limit` events, so what the webhook dispatcher holds
stays bounded, and on a feed of which little is deliverable one statement moves it
past 5,000 events rather than 500 (issue 13: ~43 batches of three statements per
10,000 no-op jobs cost the dispatcher ~10 us a job)."""


def deliverable_read_full(returned: int, scanned: int, limit: int) -> bool:
    """Whether a deliverable read stopped at a limit, so more may follow its position:
    `limit` events returned, or its scan of `DELIVERABLE_SCAN` x `limit` used up."""
    return returned == limit or scanned == limit * DELIVERABLE_SCAN


@dataclass(frozen=True, slots=True)
class FeedEvent:
    """One event of the feed: a transition of a job, with what readers filter it by."""

    position: FeedPosition
    job_id: int
    tenant: str
    task: str
    queue: str
    at: int
    from_state: JobState | None
    to_state: JobState
    reason: str = ""
    webhook: bool = True
    """Whether the job has a `webhook_url` of its own (True where the store did not say):
    the webhook dispatcher reads the job of a terminal event only then, or when a
    subscription wants the event."""

    @property
    def type(self) -> str:
        """The event's client-facing type, such as `job.succeeded`."""
        return event_type(self.from_state, self.to_state, self.reason)


@dataclass(frozen=True, slots=True)
class FeedFilter:
    """Which events a reader wants; an empty tuple means any."""

    tenant: str | None = None
    job_id: int | None = None
    tasks: tuple[str, ...] = ()
    queues: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    deliverable: tuple[str, ...] | None = None
    """When set, only events a webhook may be sent for: every event of these tenants
    (they have subscriptions), and a terminal event of a job with its own URL. Such a
    read returns at most `limit` of them and scans at most `DELIVERABLE_SCAN` x `limit`
    events: its page's position is past the last event returned once `limit` came
    back, else past the last one scanned."""

    def matches(self, event: FeedEvent) -> bool:
        """Whether `event` passes every condition of this filter."""
        return (
            (self.tenant is None or event.tenant == self.tenant)
            and (self.job_id is None or event.job_id == self.job_id)
            and (not self.tasks or event.task in self.tasks)
            and (not self.queues or event.queue in self.queues)
            and (not self.types or event.type in self.types)
            and (self.deliverable is None or _deliverable(event, self.deliverable))
        )


def _deliverable(event: FeedEvent, tenants: tuple[str, ...]) -> bool:
    return event.tenant in tenants or (event.webhook and event.type in TERMINAL_TYPES)


@dataclass(frozen=True, slots=True)
class FeedPage:
    """Events read after a position, and the position to read from next.

    `position` may be past the last event returned: rows the filter dropped, or rows of
    other tenants, still move a reader along.
    """

    events: list[FeedEvent] = field(default_factory=list)
    position: FeedPosition = START
    full: bool = False
    """The read stopped at its limit (or, deliverable, its scan's): more events may
    follow `position` already."""
