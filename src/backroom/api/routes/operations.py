"""Routes for operators: liveness, readiness and Prometheus metrics (no key needed)."""

from __future__ import annotations

from fastapi import APIRouter, Response

from backroom.api.models.jobs import Status
from backroom.api.responses import problem_responses, to_response
from backroom.app import App
from backroom.service import health
from backroom.service.metrics import METRICS_MEDIA_TYPE, exposition


def operations_router(app: App) -> APIRouter:
    """Health and metrics routes of `app`."""
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
        summary="Queue health in the Prometheus text format",
        response_class=Response,
        responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
    )
    async def metrics() -> Response:
        return Response(await exposition(app), media_type=METRICS_MEDIA_TYPE)

    return router
