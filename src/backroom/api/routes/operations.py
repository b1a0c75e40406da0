"""Routes for operators: liveness, readiness and Prometheus metrics (no key needed)."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST

from backroom.api.metrics import render_metrics
from backroom.api.models.jobs import Status
from backroom.api.responses import problem_responses, to_response
from backroom.app import App
from backroom.service import jobs as service


def operations_router(app: App) -> APIRouter:
    """Health and metrics routes of `app`."""
    router = APIRouter(tags=["operations"])

    @router.get("/healthz", response_model=Status, summary="The process is up")
    async def healthz() -> Response:
        return to_response(service.health())

    @router.get(
        "/readyz",
        response_model=Status,
        summary="The store is reachable",
        responses=problem_responses(503),
    )
    async def readyz() -> Response:
        return to_response(await service.readiness(app))

    @router.get(
        "/metrics",
        summary="Queue health in the Prometheus text format",
        response_class=Response,
        responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
    )
    async def metrics() -> Response:
        stats = await app.store.stats(app.clock.now())
        return Response(render_metrics(stats), media_type=CONTENT_TYPE_LATEST)

    return router
