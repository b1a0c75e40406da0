"""Refuse request bodies over the limit with a 413, before anything parses them.

A declared `Content-Length` over the limit is answered at once, without reading the
body. A body without one (chunked) is counted as it arrives, and reading stops with a
413 the moment it passes the limit, so no more than the limit is ever buffered.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backroom.api.responses import to_response
from backroom.service.replies import problem

DEFAULT_MAX_BODY_BYTES = 1024 * 1024


def _declared_length(scope: Scope) -> int | None:
    value = Headers(scope=scope).get("content-length")
    return int(value) if value is not None and value.isdigit() else None


class BodyLimit:
    """ASGI middleware: at most `max_bytes` of request body per request."""

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _too_large(self) -> str:
        return f"the request body is over the limit of {self.max_bytes} bytes"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, unless its body is or becomes too large."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
        if declared is not None and declared > self.max_bytes:
            await to_response(problem(413, self._too_large()))(scope, receive, send)
            return
        received = 0

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.max_bytes:
                # Raised inside the route's body read, so the problem handlers answer it.
                raise HTTPException(413, self._too_large())
            return message

        await self.app(scope, counting_receive, send)
