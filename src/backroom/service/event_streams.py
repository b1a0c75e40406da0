"""Event streams for clients: a job's history then its live events, or a tenant's feed.

A stream first registers with the process's `FeedHub` (so nothing that happens from then
on is missed), then reads what the store already holds after the client's last event id,
then hands over to the live events, skipping any it already sent. A job's stream ends
after the job's terminal event; a feed stream runs until the client goes away. Each
message's id is the event's feed position, which a client sends back as `Last-Event-ID`
to resume exactly where it stopped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from backroom.core.feed import (
    EVENT_TYPES,
    START,
    TERMINAL_TYPES,
    FeedEvent,
    FeedFilter,
    FeedPosition,
)
from backroom.core.job import JSON
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.feed_hub import FeedHub, StreamLagged
from backroom.service.replies import Reply, invalid_field, job_not_found
from backroom.store.protocol import ServiceStore

_PAGE = 500


@dataclass(frozen=True, slots=True)
class StreamMessage:
    """One server-sent event: its id (a feed position), its type and its JSON data."""

    id: str | None
    event: str
    data: dict[str, JSON]


def event_data(event: FeedEvent) -> dict[str, JSON]:
    """The JSON of a feed event, as streams and the feed endpoint show it."""
    return {
        "type": event.type,
        "job_id": event.job_id,
        "tenant": event.tenant,
        "task": event.task,
        "queue": event.queue,
        "at": event.at,
        "from_state": None if event.from_state is None else str(event.from_state),
        "to_state": str(event.to_state),
        "reason": event.reason,
    }


async def _message(store: ServiceStore, event: FeedEvent) -> StreamMessage:
    data = event_data(event)
    if event.type == "job.progress":
        job = await store.get(event.job_id, None)
        if job is not None:
            data |= {"attempt": job.attempt, "progress": job.progress, "partial": job.partial}
    elif event.type == "job.started":
        job = await store.get(event.job_id, None)
        if job is not None:
            data["attempt"] = job.attempt
    return StreamMessage(event.position.token(), event.type, data)


def lagged_message() -> StreamMessage:
    """What a client that fell behind is told before its stream is closed."""
    return StreamMessage(
        None,
        "error",
        {
            "type": "stream.lagged",
            "detail": "the stream fell behind the event feed: reconnect with Last-Event-ID",
        },
    )


def feed_hub(app: AppParts, poll_ms: int = 250) -> FeedHub:
    """The hub that follows the feed for every stream of one server process."""
    return FeedHub(lambda: app.store, app.clock, poll_ms=poll_ms)


def parse_position(token: str | None, field: str) -> FeedPosition | Reply | None:
    """A client's `Last-Event-ID` as a position; a 422 naming `field` if it is not one."""
    if token is None:
        return None
    try:
        return FeedPosition.parse(token)
    except ValueError as error:
        return invalid_field(("header", field), str(error))


async def job_events(
    app: AppParts, hub: FeedHub, caller: Caller, job_id: int, after: FeedPosition | None
) -> AsyncIterator[StreamMessage] | Reply:
    """The stream of job `job_id`'s events after `after`, or a 404 for no such job."""
    if await app.store.get(job_id, caller.scope) is None:
        return job_not_found(job_id)
    return job_stream(app.store, hub, job_id, caller.scope, after or START)


def tenant_events(
    app: AppParts,
    hub: FeedHub,
    caller: Caller,
    where: FeedFilter,
    after: FeedPosition | None,
) -> AsyncIterator[StreamMessage] | Reply:
    """The stream of the caller's events (every tenant's for an admin) that `where` passes."""
    unknown = sorted(set(where.types) - set(EVENT_TYPES))
    if unknown:
        return invalid_field(("query", "type"), f"choose from {', '.join(EVENT_TYPES)}")
    scoped = FeedFilter(
        tenant=caller.scope, tasks=where.tasks, queues=where.queues, types=where.types
    )
    return feed_stream(app.store, hub, scoped, after)


async def job_stream(
    store: ServiceStore, hub: FeedHub, job_id: int, tenant: str | None, after: FeedPosition
) -> AsyncIterator[StreamMessage]:
    """Job `job_id`'s events after `after`, then live ones, until its terminal event."""
    where = FeedFilter(tenant=tenant, job_id=job_id)
    stream = await hub.open(where)
    try:
        last = after
        async for event in _history(store, where, after):
            last = event.position
            yield await _message(store, event)
            if event.type in TERMINAL_TYPES:
                return
        async for event in stream.events():
            if event.position.event_id <= last.event_id:
                continue
            last = event.position
            yield await _message(store, event)
            if event.type in TERMINAL_TYPES:
                return
    except StreamLagged:
        yield lagged_message()
    finally:
        hub.close_stream(stream)


async def feed_stream(
    store: ServiceStore, hub: FeedHub, where: FeedFilter, after: FeedPosition | None
) -> AsyncIterator[StreamMessage]:
    """The events `where` passes: after `after` (from now if None), then live ones."""
    stream = await hub.open(where)
    try:
        last = await store.feed_head() if after is None else after
        if after is not None:
            async for event in _history(store, where, after):
                last = event.position
                yield await _message(store, event)
        async for event in stream.events():
            if event.position <= last:
                continue
            last = event.position
            yield await _message(store, event)
    except StreamLagged:
        yield lagged_message()
    finally:
        hub.close_stream(stream)


async def _history(
    store: ServiceStore, where: FeedFilter, after: FeedPosition
) -> AsyncIterator[FeedEvent]:
    position = after
    while True:
        page = await store.read_feed(position, where, _PAGE)
        for event in page.events:
            yield event
        if page.position == position:
            return
        position = page.position
