"""`backroom webhooks ...`: subscriptions, the tenant's signing secret, and deliveries.

Each works on the local database (`--db`, acting as `--tenant`) or, with `--url`, on a
server (the API key names the tenant).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

import typer
from rich.table import Table

from backroom.cli.console import out, print_json
from backroom.cli.options import ApiKeyOption, DbOption, UrlOption
from backroom.cli.targets import Document, Target
from backroom.cli.webhook_backends import WebhookBackend, open_webhooks
from backroom.service.webhooks import SubscriptionRequest

T = TypeVar("T")

webhooks = typer.Typer(help="Webhook subscriptions, signing secrets and deliveries.")
webhooks.info.no_args_is_help = True

WebhookTenantOption = Annotated[
    str | None, typer.Option(help="The tenant to act as (local database only).")
]


def _with_webhooks(target: Target, action: Callable[[WebhookBackend], Awaitable[T]]) -> T:
    async def run() -> T:
        async with open_webhooks(target) as backend:
            return await action(backend)

    return asyncio.run(run())


def _table(*headers: str) -> Table:
    """A table whose long cells (URLs, webhook ids) wrap instead of being cut short."""
    table = Table(*headers)
    for column in table.columns:
        column.overflow = "fold"
    return table


def _print_secret(document: Document) -> None:
    """The secret, alone on its line (for scripts), and until when the old one signs."""
    print(document["secret"])
    until = document.get("previous_secret_valid_until")
    if until is not None:
        out.print(f"the previous secret also signs until {until}")


@webhooks.command()
def create(
    url: Annotated[str, typer.Argument(help="Where to POST the events (http or https).")],
    event: Annotated[
        list[str],
        typer.Option(
            "--event",
            help="An event type: job.succeeded, job.failed, job.cancelled, "
            "job.dead_lettered or job.progress (repeat for more).",
        ),
    ],
    task: Annotated[list[str] | None, typer.Option(help="Only this task's jobs.")] = None,
    queue: Annotated[list[str] | None, typer.Option(help="Only this queue's jobs.")] = None,
    tenant: WebhookTenantOption = None,
    db: DbOption = None,
    server: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """Subscribe to job events and print the subscription's signing secret, once."""
    request = SubscriptionRequest(url, event, tuple(task or ()), tuple(queue or ()))
    target = Target(db, server, api_key, tenant)
    document = _with_webhooks(target, lambda backend: backend.create(request))
    events = ", ".join(document["event_types"])
    out.print(f"webhook {document['id']}: {document['url']} ({events})")
    out.print("its signing secret, shown only this once:")
    _print_secret(document)


@webhooks.command("list")
def list_command(
    tenant: WebhookTenantOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """List the webhook subscriptions."""
    found = _with_webhooks(Target(db, url, api_key, tenant), lambda b: b.subscriptions())
    table = _table("id", "tenant", "url", "events", "tasks", "queues", "enabled", "created")
    for item in found:
        enabled = "yes" if item["enabled"] else f"no: {item['disabled_reason']}"
        table.add_row(
            str(item["id"]),
            item["tenant"],
            item["url"],
            " ".join(item["event_types"]),
            " ".join(item["tasks"]) or "-",
            " ".join(item["queues"]) or "-",
            enabled,
            item["created_at"],
        )
    out.print(table)


@webhooks.command()
def delete(
    subscription_id: Annotated[int, typer.Argument(help="The subscription's id.")],
    tenant: WebhookTenantOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """Delete a subscription (its pending deliveries are not sent)."""
    _with_webhooks(Target(db, url, api_key, tenant), lambda b: b.delete(subscription_id))
    out.print(f"deleted webhook {subscription_id}")


@webhooks.command()
def rotate(
    subscription_id: Annotated[int, typer.Argument(help="The subscription's id.")],
    tenant: WebhookTenantOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """Give a subscription a new secret and print it, once (the old one signs for a day)."""
    target = Target(db, url, api_key, tenant)
    document = _with_webhooks(target, lambda b: b.rotate(subscription_id))
    out.print(f"webhook {document['id']}: new signing secret, shown only this once:")
    _print_secret(document)


@webhooks.command()
def secret(
    new: Annotated[
        bool, typer.Option("--rotate", help="Make a new one (the old one signs for a day).")
    ] = False,
    tenant: WebhookTenantOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """Print the secret that signs deliveries to the tenant's jobs' own --webhook-url."""
    target = Target(db, url, api_key, tenant)
    _print_secret(_with_webhooks(target, lambda b: b.signing_secret(rotate=new)))


@webhooks.command()
def deliveries(
    job_id: Annotated[int, typer.Argument(help="The job whose deliveries to list.")],
    tenant: WebhookTenantOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """Print the webhook deliveries of a job's events, with their attempts, as JSON."""
    print_json(_with_webhooks(Target(db, url, api_key, tenant), lambda b: b.deliveries(job_id)))


@webhooks.command()
def redeliver(
    delivery_id: Annotated[int, typer.Argument(help="The delivery to send again.")],
    tenant: WebhookTenantOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """Send a delivery again: same body, same webhook-id."""
    target = Target(db, url, api_key, tenant)
    document = _with_webhooks(target, lambda b: b.redeliver(delivery_id))
    out.print(f"delivery {document['id']} queued again (webhook-id {document['webhook_id']})")
