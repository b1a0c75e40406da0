"""`create_api(app, settings)`: the FastAPI application for one `App`. No globals:
every route closes over the app and settings it was built with."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

from fastapi import FastAPI
from pydantic.json_schema import models_json_schema

from backroom.api.auth import authenticator
from backroom.api.body_limit import BodyLimit
from backroom.api.docs import install_docs
from backroom.api.models.batch import BatchJob
from backroom.api.models.jobs import Problem
from backroom.api.problems import index_methods, install_problem_handlers
from backroom.api.routes.admin import admin_router
from backroom.api.routes.batch import batch_router
from backroom.api.routes.dead_letters import dead_letters_router
from backroom.api.routes.events import events_router
from backroom.api.routes.jobs import jobs_router
from backroom.api.routes.llm import llm_router
from backroom.api.routes.operations import operations_router
from backroom.api.routes.queues import queues_router
from backroom.api.routes.webhooks import webhooks_router
from backroom.api.settings import ApiSettings
from backroom.app import App
from backroom.dashboard import install_dashboard
from backroom.service.event_streams import feed_hub
from backroom.service.submit import SubmitPolicy

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
        version=version("backroom"),
        description=DESCRIPTION,
        redoc_url=None,
        docs_url=None,  # served from local assets by `install_docs`
        # Starlette's slash redirect builds its Location from the client's Host header:
        # `/v1/jobs/` is a 404 here rather than a redirect to wherever Host points.
        redirect_slashes=False,
        lifespan=lifespan,
    )
    install_problem_handlers(api)
    install_docs(api)
    api.add_middleware(BodyLimit, max_bytes=chosen.max_body_bytes)
    authenticate = authenticator(app, chosen.admin_key, chosen.key_cache_ms)
    policy = SubmitPolicy(
        chosen.queues_with(app.tasks), chosen.full_retry_after_s, chosen.webhook_policy
    )
    routers = [
        jobs_router(app, authenticate, policy),
        batch_router(app, authenticate, policy),
        dead_letters_router(app, authenticate),
        events_router(app, authenticate, hub),
        webhooks_router(app, authenticate, chosen.webhook_policy),
        llm_router(app, authenticate),
        queues_router(app, authenticate),
        admin_router(app, authenticate),
        operations_router(app, chosen.metrics_token),
    ]
    for router in routers:
        api.include_router(router)
    index_methods(api, routers)
    install_dashboard(api, app, hub, chosen.admin_key, chosen.dashboard_secret)
    return api


class _BackroomApi(FastAPI):
    """FastAPI, whose OpenAPI document also defines `Problem`, the schema that every
    error response names (FastAPI only collects the models of success responses), and
    `BatchJob`, which a batch's jobs are checked against one by one."""

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI document, built on first use."""
        if self.openapi_schema is not None:
            return self.openapi_schema
        schema = super().openapi()  # cached by FastAPI, so completed once, in place
        _, definitions = models_json_schema(
            [(Problem, "serialization"), (BatchJob, "validation")],
            ref_template="#/components/schemas/{model}",
        )
        schema.setdefault("components", {}).setdefault("schemas", {}).update(
            definitions.get("$defs", {})
        )
        return schema
