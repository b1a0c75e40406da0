"""`POST /v1/jobs`: submit a job. The API's busiest route, so it is kept cheap.

The route takes the request whole and reads its key, headers and body itself rather
than declaring them as FastAPI parameters: solving declared parameters (the key's
dependency, two headers, the body) cost FastAPI more per request than the whole
submission behind it (py-spy, in-process: 90 us of a 265 us request; see
docs/benchmarks.md). Its answers are those the declared parameters gave, in the same
order: the body read and decoded first (as JSON only under a JSON Content-Type), then
the key (401, or 403 for a read-only key), then the Idempotency-Key header and the
body checked against `SubmitRequest`, every failure of both named in one 422. The
OpenAPI document describes the header, the body and the key as before
(`SUBMIT_OPENAPI`).
"""

from __future__ import annotations

import email.message
import json
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import FastAPI, Request, Response
from fastapi.routing import APIRoute
from pydantic import StringConstraints, TypeAdapter, ValidationError
from starlette.exceptions import HTTPException
from starlette.types import Receive, Scope, Send

from backroom.api.auth import CallerLookup, bearer_key
from backroom.api.headers import (
    KEY_HEADER_PATTERN,
    MAX_QUOTED_KEY_LENGTH,
    InvalidIdempotencyKey,
    parse_idempotency_key,
)
from backroom.api.models.jobs import JobDocument, SubmitRequest
from backroom.api.problems import undecodable_body, validation_problem
from backroom.api.responses import problem_responses, to_response
from backroom.app import App
from backroom.service import submit
from backroom.service.replies import Reply, invalid_field
from backroom.service.submit import SubmitPolicy

KEY_HEADER = "Idempotency-Key"
_KEY_TEXT = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_QUOTED_KEY_LENGTH, pattern=KEY_HEADER_PATTERN),
]
_KEY_VALUE = TypeAdapter(_KEY_TEXT)
"""What an Idempotency-Key header value must be before its key is parsed."""

_KEY_DESCRIPTION = (
    '1-255 printable ASCII characters, bare or as a quoted string ("abc", '
    'with \\" and \\\\ escapes, so up to 512 characters in all).'
)
_TRACE_DESCRIPTION = "W3C Trace Context: each attempt's span continues this trace."


def _header(name: str, title: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    """An optional header parameter, described as FastAPI describes a declared one."""
    schema = {**schema, "description": description, "title": title}
    return {
        "name": name,
        "in": "header",
        "required": False,
        "schema": schema,
        "description": description,
    }


SUBMIT_OPENAPI: dict[str, Any] = {
    "security": [{"HTTPBearer": []}],
    "parameters": [
        _header(
            KEY_HEADER,
            KEY_HEADER,
            TypeAdapter(_KEY_TEXT | None).json_schema(),
            _KEY_DESCRIPTION,
        ),
        _header(
            "traceparent",
            "Traceparent",
            TypeAdapter(str | None).json_schema(),
            _TRACE_DESCRIPTION,
        ),
    ],
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SubmitRequest"}}},
    },
}
"""The operation's parameters, body and security, which its signature does not declare."""

_JOB_HEADERS = {"Location": {"schema": {"type": "string"}, "description": "The job's URL."}}
_REPLAYED = {"Idempotent-Replayed": {"schema": {"type": "string", "enum": ["true"]}}}

_NO_BODY = object()
"""A request without a body: the body is missing."""


def _is_json(content_type: str | None) -> bool:
    """Whether a body under this Content-Type is read as JSON: application/json or
    application/*+json; none at all is not (FastAPI's strict content type)."""
    if not content_type:
        return False
    if content_type == "application/json":
        return True  # nearly every request: no need to parse the header
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


async def _decoded_body(request: Request) -> Any:
    """The body as JSON, its bytes if not sent as JSON, `_NO_BODY` if empty; or the 422
    `Reply` for JSON that does not decode."""
    try:
        raw = await request.body()
    except HTTPException:
        raise  # the body limit's 413
    except Exception as error:
        raise HTTPException(400, "There was an error parsing the body") from error
    if not raw:
        return _NO_BODY
    if not _is_json(request.headers.get("content-type")):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as error:
        invalid = {"type": "json_invalid", "loc": ("body", error.pos), "msg": "JSON decode error"}
        return validation_problem([{**invalid, "ctx": {"error": error.msg}}])
    except (ValueError, RecursionError) as error:
        return undecodable_body(error)


def _checked(body: Any, key_header: str | None) -> SubmitRequest | Reply:
    """The body as a `SubmitRequest`, or the 422 naming what is wrong with it and with
    the Idempotency-Key header."""
    errors: list[Any] = []
    if key_header is not None:
        try:
            _KEY_VALUE.validate_python(key_header)
        except ValidationError as error:
            errors += _located(error, ("header", KEY_HEADER))
    request = None
    if body is _NO_BODY:
        errors.append({"type": "missing", "loc": ("body",), "msg": "Field required"})
    else:
        try:
            request = SubmitRequest.model_validate(body, from_attributes=True)
        except ValidationError as error:
            errors += _located(error, ("body",))
    if errors or request is None:
        return validation_problem(errors)
    return request


def _located(error: ValidationError, prefix: tuple[str, ...]) -> list[Any]:
    return [{**entry, "loc": (*prefix, *entry["loc"])} for entry in error.errors(include_url=False)]


class _RequestRoute(APIRoute):
    """A route whose endpoint takes the request and answers the response itself: called
    as it is, without FastAPI's request handler (dependency solving, body parsing, the
    response model) nor its exit stacks (for dependencies with `yield`), none of which
    such an endpoint uses. Errors it raises reach the app's exception handlers as any
    route's do."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **options: Any) -> None:
        super().__init__(path, endpoint, **options)
        self.app = self._answer

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """The endpoint itself."""
        endpoint: Callable[[Request], Coroutine[Any, Any, Response]] = self.endpoint
        return endpoint

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.endpoint(Request(scope, receive, send))
        await response(scope, receive, send)


def add_submit_route(
    api: FastAPI, app: App, callers: CallerLookup, policy: SubmitPolicy
) -> APIRoute:
    """Add `POST /v1/jobs` of `app`, for callers `callers` admits, to `api` itself (not
    through an included router, which FastAPI matches once to choose the router and
    again to choose the route); the route added."""

    async def submit_job(request: Request) -> Response:
        body = await _decoded_body(request)
        if isinstance(body, Reply):
            return to_response(body)
        headers = request.headers
        caller = await callers.admit(bearer_key(headers.get("authorization")), request.method)
        key_header = headers.get(KEY_HEADER)
        checked = _checked(body, key_header)
        if isinstance(checked, Reply):
            return to_response(checked)
        key = None
        if key_header is not None:
            try:
                key = parse_idempotency_key(key_header)
            except InvalidIdempotencyKey as error:
                return to_response(invalid_field(("header", KEY_HEADER), str(error)))
        submission = checked.to_submission(key, headers.get("traceparent"))
        return to_response(await submit.submit_job(app, caller, submission, policy))

    api.router.add_api_route(
        "/v1/jobs",
        submit_job,
        methods=["POST"],
        status_code=202,
        tags=["jobs"],
        response_model=JobDocument,
        summary="Submit a job",
        responses={
            202: {"description": "A new job.", "headers": _JOB_HEADERS},
            200: {
                "description": "The job this Idempotency-Key already created (a replay).",
                "model": JobDocument,
                "headers": {**_JOB_HEADERS, **_REPLAYED},
            },
            **problem_responses(401, 413, 422, 429),
        },
        openapi_extra=SUBMIT_OPENAPI,
        route_class_override=_RequestRoute,
    )
    route = api.router.routes[-1]
    assert isinstance(route, _RequestRoute)
    return route
