"""`backroom tenants create|list|revoke` and `tenants keys create`: tenants and API keys."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Annotated

import typer
from rich.table import Table

from backroom.cli.local import with_app
from backroom.cli.options import DbOption, out
from backroom.cli.targets import CliError
from backroom.core.usage import DailyBudget
from backroom.service.api_keys import add_key, create_new_tenant, list_tenants, revoke_keys
from backroom.service.documents import iso, usd_text

tenants = typer.Typer(help="Tenants and their API keys.", no_args_is_help=True)
keys = typer.Typer(help="A tenant's API keys.", no_args_is_help=True)
tenants.add_typer(keys, name="keys")


@keys.command("create")
def create_key(
    name: Annotated[str, typer.Argument(help="The tenant to give a new key.")],
    db: DbOption = None,
) -> None:
    """Print a new API key for an existing tenant, once (a lost key's replacement)."""
    key = with_app(db, lambda app: add_key(app, name))
    out.print(f"tenant {name!r}: new API key (shown only this once):")
    print(key)


@tenants.command()
def create(
    name: Annotated[str, typer.Argument(help="The tenant's name.")],
    max_queued: Annotated[
        int | None, typer.Option(min=1, help="Cap of queued or running jobs (none by default).")
    ] = None,
    admin: Annotated[bool, typer.Option("--admin", help="Its keys act on every tenant.")] = False,
    daily_budget_usd: Annotated[
        str | None,
        typer.Option(
            help="LLM spend allowed per UTC day, in US dollars (none by default).",
            metavar="USD",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Create a tenant and print its first API key, once (an existing name is refused)."""
    budget = None if daily_budget_usd is None else _daily_budget(daily_budget_usd)
    tenant, key = with_app(
        db,
        lambda app: create_new_tenant(
            app, name, max_queued=max_queued, admin=admin, daily_budget=budget
        ),
    )
    role = "admin tenant" if tenant.admin else "tenant"
    out.print(f"{role} {tenant.name!r}: new API key (shown only this once):")
    print(key)


def _daily_budget(text: str) -> DailyBudget:
    """A budget given in dollars, read exactly (never through float)."""
    try:
        amount = Decimal(text)
    except InvalidOperation:
        raise CliError(f"--daily-budget-usd takes an amount of dollars, not {text!r}") from None
    if not amount.is_finite() or amount < 0:
        raise CliError(f"--daily-budget-usd must be 0 or more, not {text!r}")
    return DailyBudget.of_usd(amount)


@tenants.command("list")
def list_command(db: DbOption = None) -> None:
    """List the tenants and their caps."""
    table = Table("name", "admin", "max queued", "daily budget USD", "created")
    for tenant in with_app(db, list_tenants):
        cap = "-" if tenant.max_queued is None else str(tenant.max_queued)
        budget = tenant.daily_budget
        spend = "-" if budget is None else usd_text(budget.limit_pico_usd)
        table.add_row(
            tenant.name, "yes" if tenant.admin else "", cap, spend, iso(tenant.created_at)
        )
    out.print(table)


@tenants.command()
def revoke(
    name: Annotated[str, typer.Argument(help="The tenant whose keys to revoke.")],
    db: DbOption = None,
) -> None:
    """Revoke every API key of a tenant (its jobs stay)."""
    revoked = with_app(db, lambda app: revoke_keys(app, name))
    if revoked == 0:
        raise CliError(f"tenant {name!r} has no active keys")
    out.print(f"revoked {revoked} key(s) of tenant {name!r}")
