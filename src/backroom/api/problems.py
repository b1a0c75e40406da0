"""Every error as an RFC 9457 problem: FastAPI's own, Starlette's, and ours.

Validation errors become a 422 whose `detail` and `errors` name each bad field;
unknown routes, wrong methods and oversized bodies keep their status; a store that
cannot be reached is a 503; anything unexpected is a bare 500 without a traceback.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException

from backroom.api.responses import to_response
from backroom.core.errors import StoreUnavailable
from backroom.service.replies import HTTP_TITLES, Reply, invalid_field, problem

STORE_RETRY_AFTER_S = 1

_log = logging.getLogger(__name__)


class ProblemError(Exception):
    """Raised (by a dependency) to answer with a problem reply at once."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.body)
        self.reply = reply


def _location(parts: tuple[str | int, ...]) -> str:
    return ".".join(str(part) for part in parts)


async def _on_problem(_request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, ProblemError)
    return to_response(error.reply)


def index_methods(api: FastAPI, routers: Iterable[APIRouter]) -> None:
    """Remember which methods each path of `routers` takes, for the `Allow` of a 405.

    Starlette's 405 names the methods of the first route that matched the path only,
    and `/v1/jobs` is two routes (GET and POST).
    """
    api.state.path_methods = [
        (route.path_regex, frozenset(route.methods or ()))
        for router in routers
        for route in router.routes
        if isinstance(route, APIRoute)
    ]


def _allowed_methods(request: Request) -> str:
    path = request.scope["path"]
    indexed: list[tuple[re.Pattern[str], frozenset[str]]] = request.app.state.path_methods
    methods = {name for pattern, names in indexed if pattern.match(path) for name in names}
    return ", ".join(sorted(methods))


async def _on_http_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, StarletteHTTPException)
    if error.status_code == 400 and isinstance(error.__cause__, ValueError | RecursionError):
        # FastAPI's 400 for a body it could not decode (not UTF-8, nested too deep).
        return to_response(undecodable_body(error.__cause__))
    title = HTTP_TITLES.get(error.status_code, "Error")
    detail = error.detail if error.detail and error.detail != title else title
    headers = dict(error.headers or {})
    if error.status_code == 405:
        headers["Allow"] = _allowed_methods(request)
    return to_response(problem(error.status_code, detail, headers=headers))


def undecodable_body(error: ValueError | RecursionError) -> Reply:
    """The 422 for a JSON body that `json.loads` could not decode for a reason other than
    its syntax (not UTF-8, nested too deep): to a client, an invalid body like any other."""
    return invalid_field(("body",), f"the body is not valid JSON text: {type(error).__name__}")


def _field_error(entry: Any, prefix: tuple[str, ...]) -> dict[str, Any]:
    if entry["type"] == "json_invalid":
        # FastAPI puts the character offset in `loc`; the decoder's words say more.
        reason = entry.get("ctx", {}).get("error", "")
        return {"loc": ["body"], "msg": f"invalid JSON: {reason}", "type": "json_invalid"}
    return {"loc": [*prefix, *entry["loc"]], "msg": entry["msg"], "type": entry["type"]}


def validation_problem(errors: Sequence[Any], prefix: tuple[str, ...] = ()) -> Reply:
    """The 422 naming each of pydantic's `errors`, their locations under `prefix`."""
    fields = [_field_error(entry, prefix) for entry in errors]
    detail = "; ".join(f"{_location(tuple(entry['loc']))}: {entry['msg']}" for entry in fields)
    return problem(422, detail, kind="validation-error", title="Invalid request", errors=fields)


async def _on_validation_error(_request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    return to_response(validation_problem(error.errors()))


def store_unavailable(error: Exception) -> Reply:
    """The 503 for a store that cannot be reached; the cause (a database host and port,
    a file path) goes to the server's log only."""
    _log.warning("store unavailable: %s", error)
    return problem(
        503,
        "the store is unavailable, try again",
        kind="store-unavailable",
        headers={"Retry-After": str(STORE_RETRY_AFTER_S)},
    )


async def _on_store_unavailable(_request: Request, error: Exception) -> JSONResponse:
    return to_response(store_unavailable(error))


def unexpected_problem() -> Reply:
    """The 500 for an error nothing expected (no traceback: that is for the log)."""
    return problem(500, "the server failed to handle the request")


async def _on_unexpected(_request: Request, _error: Exception) -> JSONResponse:
    # Starlette re-raises the error after this answer, so the server still logs it.
    return to_response(unexpected_problem())


def install_problem_handlers(api: FastAPI) -> None:
    """Make every error `api` answers an application/problem+json document."""
    api.add_exception_handler(ProblemError, _on_problem)
    api.add_exception_handler(StarletteHTTPException, _on_http_error)
    api.add_exception_handler(RequestValidationError, _on_validation_error)
    api.add_exception_handler(StoreUnavailable, _on_store_unavailable)
    api.add_exception_handler(Exception, _on_unexpected)
