"""`POST /v1/jobs` without FastAPI's routing and dependency solving, for ordinary requests.

A submission is the request an API server answers most, and most of the time it takes
goes to the framework: its middleware, matching the path against every route, solving
the key and header dependencies, building the request and response objects.
`QuickSubmit`, in front of the FastAPI app, answers `POST /v1/jobs` itself when nothing
about the request needs the framework: a JSON body with a declared length within the
body limit, one bearer key that names a caller who may write, at most one well-formed
Idempotency-Key and one traceparent, and a body that the route's own model
(`SubmitRequest`) accepts, parsed and validated exactly as FastAPI does (`json.loads`,
then the model).

Everything else (no key, a key unknown or read-only, a body that fails validation, a
form or chunked body, headers repeated) is passed on to the FastAPI route untouched,
its body replayed, so every refusal is the route's own RFC 9457 problem. The answer of
an accepted submission is the service's, rendered as the route renders it: the same
status codes, headers and body, the same 429s for a tenant at its cap or out of budget,
a store that cannot be reached is the same 503, and an unexpected error the same 500.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from fastapi.security.utils import get_authorization_scheme_param
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backroom.api.auth import CallerLookup
from backroom.api.headers import InvalidIdempotencyKey, parse_idempotency_key
from backroom.api.models.jobs import SubmitRequest
from backroom.api.problems import store_unavailable, unexpected_problem
from backroom.api.responses import to_response
from backroom.app import App
from backroom.core.errors import StoreUnavailable
from backroom.service import submit
from backroom.service.callers import refuse_read_only
from backroom.service.replies import Reply
from backroom.service.submit import SubmitPolicy

PATH = "/v1/jobs"

_WANTED = frozenset(
    {b"content-type", b"content-length", b"authorization", b"idempotency-key", b"traceparent"}
)


@dataclass(frozen=True, slots=True)
class _Head:
    """What the quick path reads from a request's headers."""

    length: int
    bearer: str
    key: str | None
    traceparent: str | None


def _head(scope: Scope) -> _Head | None:
    """The request's headers, if they are ordinary enough for the quick path."""
    seen: dict[bytes, str] = {}
    for name, value in scope["headers"]:
        if name in _WANTED:
            if name in seen:
                return None  # repeated: the route decides which one counts
            seen[name] = value.decode("latin-1")
        elif name == b"transfer-encoding":
            return None
    length = seen.get(b"content-length", "")
    if seen.get(b"content-type", "").lower() != "application/json" or not length.isdigit():
        return None
    scheme, credentials = get_authorization_scheme_param(seen.get(b"authorization"))
    if scheme.lower() != "bearer" or not credentials:
        return None
    raw_key = seen.get(b"idempotency-key")
    key = None
    if raw_key is not None:
        # A key that parses is 1-255 printable characters, so its header is printable
        # and at most MAX_QUOTED_KEY_LENGTH long: what the route's header check asks.
        try:
            key = parse_idempotency_key(raw_key)
        except InvalidIdempotencyKey:
            return None
    return _Head(int(length), credentials, key, seen.get(b"traceparent"))


async def _body(receive: Receive) -> bytes | None:
    """The whole request body; None if the client went away first."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives `body` once more, then whatever the client sends next."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


class QuickSubmit:
    """An ASGI app in front of `app`: ordinary `POST /v1/jobs` requests (with bodies of
    at most `max_body_bytes`) answered here, everything else by `app` (see the module)."""

    def __init__(
        self,
        app: ASGIApp,
        backroom: App,
        callers: CallerLookup,
        policy: SubmitPolicy,
        *,
        max_body_bytes: int,
    ) -> None:
        self.app = app
        self._backroom = backroom
        self._callers = callers
        self._policy = policy
        self._max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer the request if it is an ordinary submission; else pass it on."""
        head = None
        if (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and scope["path"] == PATH
            and not scope.get("root_path")
            and not scope.get("query_string")
        ):
            head = _head(scope)
        if head is None or not 0 < head.length <= self._max_body_bytes:
            await self.app(scope, receive, send)
            return
        body = await _body(receive)
        if body is None:
            return  # the client is gone: nobody to answer
        try:
            reply = await self._answer(head, body)
        except Exception:
            # What the app's outermost handler answers; raised on, for the server's log.
            await to_response(unexpected_problem())(scope, receive, send)
            raise
        if reply is None:
            await self.app(scope, _replay(body, receive), send)
            return
        await to_response(reply)(scope, receive, send)

    async def _answer(self, head: _Head, body: bytes) -> Reply | None:
        """The route's answer to the submission; None when the route must answer it."""
        try:
            request = SubmitRequest.model_validate(json.loads(body), from_attributes=True)
        except (ValueError, ValidationError, RecursionError):
            return None
        submission = request.to_submission(head.key, head.traceparent)
        try:
            caller = await self._callers.caller(head.bearer)
            if caller is None or refuse_read_only(caller) is not None:
                return None
            return await submit.submit_job(self._backroom, caller, submission, self._policy)
        except StoreUnavailable as error:
            return store_unavailable(error)
