"""`create_api(app, settings)`: the FastAPI application for one `App`. No globals:
every route closes over the app and settings it was built with."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute
from pydantic.json_schema import models_json_schema
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from backroom.api.auth import CallerLookup, authenticator
from backroom.api.body_limit import BodyLimit
from backroom.api.docs import install_docs
from backroom.api.models.batch import BatchJob
from backroom.api.models.jobs import Problem, SubmitRequest
from backroom.api.problems import index_methods, install_problem_handlers
from backroom.api.routes.admin import admin_router
from backroom.api.routes.batch import batch_router
from backroom.api.routes.dead_letters import dead_letters_router
from backroom.api.routes.events import events_router
from backroom.api.routes.jobs import jobs_router
from backroom.api.routes.llm import llm_router
from backroom.api.routes.operations import operations_router
from backroom.api.routes.provider_batches import provider_batches_router
from backroom.api.routes.queues import queues_router
from backroom.api.routes.submit import add_submit_route
from backroom.api.routes.webhooks import webhooks_router
from backroom.api.settings import ApiSettings
from backroom.app import App
from backroom.dashboard import install_dashboard
from backroom.service.event_streams import feed_hub
from backroom.service.submit import SubmitPolicy
from backroom.version import __version__

DESCRIPTION = """\
Submit slow work, get a job id in milliseconds, poll for the result.

Authenticate with `Authorization: Bearer KEY`. Send an `Idempotency-Key` with each
submission: a repeat returns the first job instead of doing the work twice. Every
error is an RFC 9457 `application/problem+json` document.
"""


def create_api(app: App, settings: ApiSettings | None = None) -> FastAPI:
    """The HTTP API over `app` (which the caller opens and closes)."""
    chosen = settings or ApiSettings()
    hub = feed_hub(app)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await hub.close()

    api = _BackroomApi(
        title="backroom",
        version=__version__,
        description=DESCRIPTION,
        redoc_url=None,
        docs_url=None,  # served from local assets by `install_docs`
        # Starlette's slash redirect builds its Location from the client's Host header:
        # `/v1/jobs/` is a 404 here rather than a redirect to wherever Host points.
        redirect_slashes=False,
        lifespan=lifespan,
    )
    callers = CallerLookup(app, chosen.admin_key, chosen.key_cache_ms)
    authenticate = authenticator(callers)
    policy = SubmitPolicy(
        chosen.queues_with(app.tasks), chosen.full_retry_after_s, chosen.webhook_policy
    )
    api.submit_route = add_submit_route(api, app, callers, policy)
    install_problem_handlers(api)
    install_docs(api)
    api.add_middleware(BodyLimit, max_bytes=chosen.max_body_bytes)
    routers = [
        jobs_router(app, authenticate),
        batch_router(app, authenticate, policy),
        dead_letters_router(app, authenticate),
        events_router(app, authenticate, hub),
        webhooks_router(app, authenticate, chosen.webhook_policy),
        llm_router(app, authenticate),
        provider_batches_router(app, authenticate),
        queues_router(app, authenticate),
        admin_router(app, authenticate),
        operations_router(app, chosen.metrics_token),
    ]
    for router in routers:
        api.include_router(router)
    index_methods(api, [api.router, *routers])
    install_dashboard(api, app, hub, chosen.admin_key, chosen.dashboard_secret)
    return api


class _BackroomApi(FastAPI):
    """FastAPI, whose OpenAPI document also defines `Problem`, the schema that every
    error response names (FastAPI only collects the models of success responses),
    `BatchJob`, which a batch's jobs are checked against one by one, and `SubmitRequest`,
    the body of `POST /v1/jobs`, which reads its body itself (see `routes.submit`); and
    which hands `POST /v1/jobs` to its route at once.

    A submission is the request the API answers most, and FastAPI's own layers cost it
    as much as the submission itself (py-spy under load: route matching twice per
    included router, an OpenTelemetry check that reads the environment, and a stack of
    middleware, see docs/benchmarks.md). `POST /v1/jobs` goes straight to its route,
    inside the app's own middleware and exception handlers (`_direct_stack`, built as
    Starlette builds the full stack), so it is answered exactly as after routing.
    """

    submit_route: APIRoute | None = None
    _direct: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one ASGI call: `POST /v1/jobs` by its route at once, the rest as FastAPI."""
        if (
            self.submit_route is not None
            and scope["type"] == "http"
            and scope["method"] == "POST"
            and scope["path"] == self.submit_route.path
            and not scope.get("root_path")
        ):
            if self._direct is None:
                self._direct = self._direct_stack(self.submit_route)
            scope["app"] = self
            await self._direct(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    def _direct_stack(self, route: APIRoute) -> ASGIApp:
        """`route` inside the app's error handlers and user middleware, as in the full stack
        (without FastAPI's telemetry, body-size and exit-stack layers, unused here)."""
        handlers, unexpected = {}, None
        for key, handler in self.exception_handlers.items():
            if key in (500, Exception):
                unexpected = handler
            else:
                handlers[key] = handler
        app: ASGIApp = ExceptionMiddleware(route.handle, handlers=handlers, debug=self.debug)
        for cls, args, kwargs in reversed(self.user_middleware):
            app = cls(app, *args, **kwargs)
        return ServerErrorMiddleware(app, handler=unexpected, debug=self.debug)

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI document, built on first use."""
        if self.openapi_schema is not None:
            return self.openapi_schema
        schema = super().openapi()  # cached by FastAPI, so completed once, in place
        _, definitions = models_json_schema(
            [(Problem, "serialization"), (BatchJob, "validation"), (SubmitRequest, "validation")],
            ref_template="#/components/schemas/{model}",
        )
        schema.setdefault("components", {}).setdefault("schemas", {}).update(
            definitions.get("$defs", {})
        )
        return schema
