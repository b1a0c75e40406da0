"""Server-sent events: `/v1/jobs/{id}/events` and the tenant-wide `/v1/events`.

Each message's `id` is its place in the event feed; a client that reconnects sends the
last one it saw as `Last-Event-ID` (or `?after=`) and misses nothing. Comments keep idle
connections alive through proxies.
"""

# No `from __future__ import annotations`: FastAPI must see the route signatures'
# local `CallerDependency` alias as a real type, not as a string it cannot resolve.
import json
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Response
from sse_starlette import EventSourceResponse, ServerSentEvent

from backroom.api.auth import Authenticator
from backroom.api.models.jobs import Name
from backroom.api.responses import problem_responses, to_response
from backroom.api.routes.jobs import JobId
from backroom.app import App
from backroom.core.feed import FeedFilter
from backroom.service import event_streams as service
from backroom.service.callers import Caller
from backroom.service.event_streams import StreamMessage
from backroom.service.feed_hub import FeedHub
from backroom.service.replies import Reply

KEEPALIVE_S = 15
_SSE = {"text/event-stream": {"schema": {"type": "string"}}}
_STREAM_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}

LastEventId = Annotated[
    str | None,
    Header(alias="Last-Event-ID", max_length=40, description="Resume after this event."),
]
After = Annotated[
    str | None,
    Query(max_length=40, pattern=r"^\d+-\d+$", description="Resume after this event id."),
]


def _stream(messages: AsyncIterator[StreamMessage] | Reply) -> Response:
    if isinstance(messages, Reply):
        return to_response(messages)

    async def frames() -> AsyncIterator[ServerSentEvent]:
        async for message in messages:
            data = json.dumps(message.data, separators=(",", ":"), ensure_ascii=False)
            yield ServerSentEvent(data, event=message.event, id=message.id)

    return EventSourceResponse(frames(), ping=KEEPALIVE_S, headers=_STREAM_HEADERS)


def events_router(app: App, authenticate: Authenticator, hub: FeedHub) -> APIRouter:
    """The event stream routes of `app`, for callers `authenticate` admits."""
    router = APIRouter(tags=["events"])
    CallerDependency = Annotated[Caller, Depends(authenticate)]

    @router.get(
        "/v1/jobs/{job_id}/events",
        summary="A job's events so far, then live until it ends (server-sent events)",
        responses={200: {"content": _SSE}, **problem_responses(401, 404, 422)},
    )
    async def job_events(
        job_id: JobId,
        caller: CallerDependency,
        last_event_id: LastEventId = None,
        after: After = None,
    ) -> Response:
        position = service.parse_position(last_event_id or after, "Last-Event-ID")
        if isinstance(position, Reply):
            return to_response(position)
        return _stream(await service.job_events(app, hub, caller, job_id, position))

    @router.get(
        "/v1/events",
        summary="The caller's event feed, live (server-sent events)",
        responses={200: {"content": _SSE}, **problem_responses(401, 422)},
    )
    async def feed_events(
        caller: CallerDependency,
        task: Annotated[list[Name] | None, Query(description="Only these tasks.")] = None,
        queue: Annotated[list[Name] | None, Query(description="Only these queues.")] = None,
        type: Annotated[list[str] | None, Query(description="Only these event types.")] = None,
        last_event_id: LastEventId = None,
        after: After = None,
    ) -> Response:
        position = service.parse_position(last_event_id or after, "Last-Event-ID")
        if isinstance(position, Reply):
            return to_response(position)
        where = FeedFilter(
            tasks=tuple(task or ()), queues=tuple(queue or ()), types=tuple(type or ())
        )
        return _stream(service.tenant_events(app, hub, caller, where, position))

    return router
