"""`/v1/webhooks` and deliveries: subscriptions, signing secrets, and what was sent."""

# No `from __future__ import annotations`: FastAPI must see the route signatures'
# local `CallerDependency` alias as a real type, not as a string it cannot resolve.
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Response

from backroom.api.auth import Authenticator
from backroom.api.models.webhooks import (
    DeliveryList,
    SigningSecret,
    Subscription,
    SubscriptionCreate,
    SubscriptionList,
)
from backroom.api.responses import problem_responses, to_response
from backroom.api.routes.jobs import MAX_JOB_ID, JobId
from backroom.app import App
from backroom.service import webhooks as service
from backroom.service.callers import Caller
from backroom.webhooks.targets import TargetPolicy

SubscriptionId = Annotated[int, Path(ge=1, le=MAX_JOB_ID, description="The subscription's id.")]
DeliveryId = Annotated[int, Path(ge=1, le=MAX_JOB_ID, description="The delivery's id.")]


def webhooks_router(app: App, authenticate: Authenticator, policy: TargetPolicy) -> APIRouter:
    """The webhook routes of `app`, for callers `authenticate` admits."""
    router = APIRouter(tags=["webhooks"])
    CallerDependency = Annotated[Caller, Depends(authenticate)]

    @router.post(
        "/v1/webhooks",
        status_code=201,
        response_model=Subscription,
        summary="Subscribe to job events (the answer shows the signing secret, once)",
        responses=problem_responses(401, 413, 422),
    )
    async def create(body: SubscriptionCreate, caller: CallerDependency) -> Response:
        request = service.SubscriptionRequest(body.url, body.event_types, body.tasks, body.queues)
        return to_response(await service.create_subscription(app, caller, request, policy))

    @router.get(
        "/v1/webhooks",
        response_model=SubscriptionList,
        summary="List webhook subscriptions",
        responses=problem_responses(401),
    )
    async def list_all(caller: CallerDependency) -> Response:
        return to_response(await service.list_subscriptions(app, caller))

    @router.get(
        "/v1/webhooks/signing-secret",
        response_model=SigningSecret,
        summary="The secret that signs deliveries to jobs' own webhook_url (made on first use)",
        responses=problem_responses(401, 422),
    )
    async def signing_secret(caller: CallerDependency) -> Response:
        return to_response(await service.signing_secret(app, caller, rotate=False))

    @router.post(
        "/v1/webhooks/signing-secret/rotate",
        response_model=SigningSecret,
        summary="Rotate that secret (the old one keeps signing for a day)",
        responses=problem_responses(401, 422),
    )
    async def rotate_signing_secret(caller: CallerDependency) -> Response:
        return to_response(await service.signing_secret(app, caller, rotate=True))

    @router.get(
        "/v1/webhooks/{subscription_id}",
        response_model=Subscription,
        summary="One webhook subscription",
        responses=problem_responses(401, 404, 422),
    )
    async def get_one(subscription_id: SubscriptionId, caller: CallerDependency) -> Response:
        return to_response(await service.get_subscription(app, caller, subscription_id))

    @router.delete(
        "/v1/webhooks/{subscription_id}",
        status_code=204,
        summary="Delete a webhook subscription",
        responses=problem_responses(401, 404, 422),
    )
    async def delete(subscription_id: SubscriptionId, caller: CallerDependency) -> Response:
        reply = await service.delete_subscription(app, caller, subscription_id)
        return Response(status_code=204) if reply.status == 204 else to_response(reply)

    @router.post(
        "/v1/webhooks/{subscription_id}/rotate-secret",
        response_model=Subscription,
        summary="Rotate a subscription's secret (the old one keeps signing for a day)",
        responses=problem_responses(401, 404, 422),
    )
    async def rotate(subscription_id: SubscriptionId, caller: CallerDependency) -> Response:
        return to_response(await service.rotate_subscription_secret(app, caller, subscription_id))

    @router.get(
        "/v1/jobs/{job_id}/deliveries",
        response_model=DeliveryList,
        summary="The webhook deliveries of a job's events",
        responses=problem_responses(401, 404, 422),
    )
    async def deliveries(job_id: JobId, caller: CallerDependency) -> Response:
        return to_response(await service.list_deliveries(app, caller, job_id))

    @router.post(
        "/v1/deliveries/{delivery_id}/redeliver",
        status_code=202,
        summary="Send a delivery again (same body, same webhook-id)",
        responses=problem_responses(401, 404, 422),
    )
    async def redeliver(delivery_id: DeliveryId, caller: CallerDependency) -> Response:
        return to_response(await service.redeliver(app, caller, delivery_id))

    return router
