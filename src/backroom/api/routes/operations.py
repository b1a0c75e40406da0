"""Routes for operators: liveness, readiness and Prometheus metrics (no API key needed;
the metrics may ask for a scrape token instead, `BACKROOM_METRICS_TOKEN`)."""

# No `from __future__ import annotations`: FastAPI must see the route signatures'
# `Annotated` header parameter as a real type.
import hmac
from typing import Annotated

from fastapi import APIRouter, Header, Response

from backroom.api.models.jobs import Status
from backroom.api.responses import problem_responses, to_response
from backroom.app import App
from backroom.service import health
from backroom.service.metrics import METRICS_MEDIA_TYPE, exposition
from backroom.service.replies import problem


def _scrape_allowed(authorization: str | None, token: str | None) -> bool:
    """True when no token is asked for, or `Authorization: Bearer TOKEN` names it."""
    if token is None:
        return True
    scheme, _, given = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.encode(), token.encode())


def operations_router(app: App, metrics_token: str | None = None) -> APIRouter:
    """Health and metrics routes of `app`; `metrics_token` guards the metrics."""
    router = APIRouter(tags=["operations"])

    @router.get("/healthz", response_model=Status, summary="The process is up")
    async def healthz() -> Response:
        return to_response(health.health())

    @router.get(
        "/readyz",
        response_model=Status,
        summary="The store is reachable",
        responses=problem_responses(503),
    )
    async def readyz() -> Response:
        return to_response(await health.readiness(app))

    @router.get(
        "/metrics",
        summary="Queues, lanes and this process's counters in the Prometheus text format",
        response_class=Response,
        responses={
            200: {"content": {"text/plain": {"schema": {"type": "string"}}}},
            **problem_responses(401),
        },
    )
    async def metrics(authorization: Annotated[str | None, Header()] = None) -> Response:
        if not _scrape_allowed(authorization, metrics_token):
            refused = problem(
                401,
                "the metrics ask for the scrape token: Authorization: Bearer TOKEN",
                headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
            )
            return to_response(refused)
        body = await exposition(app, app.telemetry.metrics)
        return Response(body, media_type=METRICS_MEDIA_TYPE)

    return router
