"""Where the `backroom webhooks` commands send their work: the local store, or a server.

As for jobs (`backroom.cli.targets`), both backends answer with the API's documents:
the local one through `backroom.service.webhooks`, the remote one through the client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Protocol

from backroom.cli.root import CliError
from backroom.cli.targets import Document, LocalSide, Target, open_side, reply_body
from backroom.service import webhooks as service
from backroom.service.webhooks import SubscriptionRequest

if TYPE_CHECKING:
    from backroom.client.async_client import AsyncClient

TENANT_NEEDED = "webhooks belong to a tenant: name it with --tenant"


class WebhookBackend(Protocol):
    """The webhook operations the CLI needs, answered as the API's documents."""

    async def create(self, request: SubscriptionRequest) -> Document:
        """Subscribe; the subscription's document, with its secret."""

    async def subscriptions(self) -> list[Document]:
        """The subscriptions the caller may see."""

    async def delete(self, subscription_id: int) -> None:
        """Delete a subscription."""

    async def rotate(self, subscription_id: int) -> Document:
        """A new secret for a subscription; its document, with the secret."""

    async def signing_secret(self, *, rotate: bool) -> Document:
        """The tenant's secret for its jobs' own `webhook_url` (a new one with `rotate`)."""

    async def deliveries(self, job_id: int) -> list[Document]:
        """A job's deliveries, with their attempts."""

    async def redeliver(self, delivery_id: int) -> Document:
        """Send a delivery again; its document."""


class LocalWebhooks:
    """Webhooks in the database, through the service's operations."""

    def __init__(self, side: LocalSide) -> None:
        self._side = side

    async def create(self, request: SubscriptionRequest) -> Document:
        """Subscribe the `--tenant` (the URL checked as the environment allows)."""
        side = self._tenant_side()
        reply = await service.create_subscription(side.app, side.caller, request, side.webhooks)
        return reply_body(reply)

    async def subscriptions(self) -> list[Document]:
        """The tenant's subscriptions (every tenant's without `--tenant`)."""
        side = self._side
        return list(
            reply_body(await service.list_subscriptions(side.app, side.caller))["subscriptions"]
        )

    async def delete(self, subscription_id: int) -> None:
        """Delete a subscription."""
        side = self._side
        reply = await service.delete_subscription(side.app, side.caller, subscription_id)
        if reply.is_problem:
            raise CliError(reply.detail)

    async def rotate(self, subscription_id: int) -> Document:
        """A new secret for a subscription."""
        side = self._side
        return reply_body(
            await service.rotate_subscription_secret(side.app, side.caller, subscription_id)
        )

    async def signing_secret(self, *, rotate: bool) -> Document:
        """The `--tenant`'s secret for its jobs' own `webhook_url`."""
        side = self._tenant_side()
        return reply_body(await service.signing_secret(side.app, side.caller, rotate=rotate))

    async def deliveries(self, job_id: int) -> list[Document]:
        """A job's deliveries, with their attempts."""
        side = self._side
        return list(
            reply_body(await service.list_deliveries(side.app, side.caller, job_id))["deliveries"]
        )

    async def redeliver(self, delivery_id: int) -> Document:
        """Send a delivery again."""
        side = self._side
        return reply_body(await service.redeliver(side.app, side.caller, delivery_id))

    def _tenant_side(self) -> LocalSide:
        # Without --tenant the CLI acts as an admin, who owns no subscriptions or secret.
        if self._side.caller.admin:
            raise CliError(TENANT_NEEDED)
        return self._side


class RemoteWebhooks:
    """Webhooks on a server, through `AsyncClient` (the key names the tenant)."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def create(self, request: SubscriptionRequest) -> Document:
        """Subscribe the key's tenant."""
        return await self._client.create_webhook(
            request.url, request.event_types, tasks=request.tasks, queues=request.queues
        )

    async def subscriptions(self) -> list[Document]:
        """The key's tenant's subscriptions."""
        return await self._client.webhooks()

    async def delete(self, subscription_id: int) -> None:
        """Delete a subscription."""
        await self._client.delete_webhook(subscription_id)

    async def rotate(self, subscription_id: int) -> Document:
        """A new secret for a subscription."""
        return await self._client.rotate_webhook_secret(subscription_id)

    async def signing_secret(self, *, rotate: bool) -> Document:
        """The key's tenant's secret for its jobs' own `webhook_url`."""
        return await self._client.signing_secret(rotate=rotate)

    async def deliveries(self, job_id: int) -> list[Document]:
        """A job's deliveries, with their attempts."""
        return await self._client.deliveries(job_id)

    async def redeliver(self, delivery_id: int) -> Document:
        """Send a delivery again."""
        return await self._client.redeliver(delivery_id)


@asynccontextmanager
async def open_webhooks(target: Target) -> AsyncIterator[WebhookBackend]:
    """The webhook backend `target` names, open for the duration of the block."""
    async with open_side(target) as side:
        if isinstance(side, LocalSide):
            yield LocalWebhooks(side)
        else:
            yield RemoteWebhooks(side)
