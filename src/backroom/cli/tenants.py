"""`backroom tenants create|update|list|revoke` and `tenants keys create|list|revoke`."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Annotated, TypeVar

import typer
from rich.table import Table

from backroom.cli.console import out
from backroom.cli.local import with_app
from backroom.cli.options import DbOption
from backroom.cli.root import CliError
from backroom.core.usage import DailyBudget, pico_usd
from backroom.service.api_keys import (
    Tenant,
    add_key,
    create_new_tenant,
    key_id_of,
    list_tenants,
    revoke_keys,
)
from backroom.service.documents import iso, usd_text
from backroom.service.tenant_admin import KEEP, Keep, list_keys, revoke_key, update_tenant

T = TypeVar("T")

tenants = typer.Typer(help="Tenants and their API keys.", no_args_is_help=True)
keys = typer.Typer(help="A tenant's API keys.", no_args_is_help=True)
tenants.add_typer(keys, name="keys")


@keys.command("create")
def create_key(
    name: Annotated[str, typer.Argument(help="The tenant to give a new key.")],
    read_only: Annotated[
        bool, typer.Option("--read-only", help="The key may look at jobs but change nothing.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Print a new API key for an existing tenant, once (a lost key's replacement)."""
    key = with_app(db, lambda app: add_key(app, name, read_only=read_only))
    _print_new_key(f"tenant {name!r}", key)


@keys.command("list")
def list_keys_command(
    name: Annotated[str, typer.Argument(help="The tenant whose keys to list.")],
    db: DbOption = None,
) -> None:
    """List a tenant's keys by id, with when each was made and revoked (never the key)."""
    table = Table("id", "created", "revoked")
    for key in with_app(db, lambda app: list_keys(app, name)):
        revoked = "-" if key.revoked_at is None else iso(key.revoked_at)
        # A read-only key is marked beside its id: a fourth column would not fit 80 columns.
        shown_id = f"{key.key_id} (read-only)" if key.read_only else key.key_id
        table.add_row(shown_id, iso(key.created_at), revoked)
    out.print(table)


@keys.command("revoke")
def revoke_key_command(
    name: Annotated[str, typer.Argument(help="The tenant the key belongs to.")],
    key_id: Annotated[str, typer.Argument(help="The key's id, as `tenants keys list` shows.")],
    db: DbOption = None,
) -> None:
    """Revoke one API key of a tenant (its other keys and its jobs stay)."""
    key = with_app(db, lambda app: revoke_key(app, name, key_id))
    out.print(f"revoked key {key.key_id} of tenant {name!r}")


def _print_new_key(whose: str, key: str) -> None:
    """Show a new key once, on its own line (scripts take the last word), after its id."""
    out.print(f"{whose}: new API key, id {key_id_of(key)} (the key is shown only this once):")
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
    max_job_cost: Annotated[
        str | None,
        typer.Option(
            help="Cap of one job's LLM cost, all its attempts together, in US dollars, for "
            "jobs that set no max_cost_usd (none by default).",
            metavar="USD",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Create a tenant and print its first API key, once (an existing name is refused)."""
    budget = None if daily_budget_usd is None else _daily_budget(daily_budget_usd)
    job_cap = None if max_job_cost is None else _pico_usd("--max-job-cost", max_job_cost)
    tenant, key = with_app(
        db,
        lambda app: create_new_tenant(
            app,
            name,
            max_queued=max_queued,
            admin=admin,
            daily_budget=budget,
            max_job_cost_pico_usd=job_cap,
        ),
    )
    role = "admin tenant" if tenant.admin else "tenant"
    _print_new_key(f"{role} {tenant.name!r}", key)


@tenants.command()
def update(
    name: Annotated[str, typer.Argument(help="The tenant to change.")],
    max_queued: Annotated[
        int | None, typer.Option(min=1, help="New cap of queued or running jobs.")
    ] = None,
    no_max_queued: Annotated[
        bool, typer.Option("--no-max-queued", help="Remove the cap of queued jobs.")
    ] = False,
    daily_budget_usd: Annotated[
        str | None,
        typer.Option(
            "--daily-budget-usd",
            "--daily-budget",
            help="New LLM spend allowed per UTC day, in US dollars.",
            metavar="USD",
        ),
    ] = None,
    no_daily_budget: Annotated[
        bool, typer.Option("--no-daily-budget", help="Remove the daily budget.")
    ] = False,
    max_job_cost: Annotated[
        str | None, typer.Option(help="New cap of one job's LLM cost, USD.", metavar="USD")
    ] = None,
    no_max_job_cost: Annotated[
        bool, typer.Option("--no-max-job-cost", help="Remove the cap of a job's cost.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Change only the given settings of an existing tenant (its keys and jobs stay)."""
    cap = _setting("--max-queued and --no-max-queued", max_queued, no_max_queued)
    budget_text = _setting(
        "--daily-budget-usd and --no-daily-budget", daily_budget_usd, no_daily_budget
    )
    job_cap_text = _setting("--max-job-cost and --no-max-job-cost", max_job_cost, no_max_job_cost)
    if all(isinstance(setting, Keep) for setting in (cap, budget_text, job_cap_text)):
        raise CliError(
            "nothing to change: give --max-queued N, --no-max-queued, --daily-budget-usd USD, "
            "--no-daily-budget, --max-job-cost USD or --no-max-job-cost"
        )
    budget = budget_text if not isinstance(budget_text, str) else _daily_budget(budget_text)
    job_cap = (
        job_cap_text
        if not isinstance(job_cap_text, str)
        else _pico_usd("--max-job-cost", job_cap_text)
    )
    tenant = with_app(
        db,
        lambda app: update_tenant(
            app, name, max_queued=cap, daily_budget=budget, max_job_cost_pico_usd=job_cap
        ),
    )
    out.print(f"tenant {tenant.name!r}: {_settings_text(tenant)}")


def _setting(flags: str, value: T | None, remove: bool) -> T | Keep | None:
    """The new value of one setting: `value`, None to remove it, or `KEEP` if not given."""
    if remove and value is not None:
        raise CliError(f"{flags} contradict each other: give one")
    if remove:
        return None
    return KEEP if value is None else value


def _settings_text(tenant: Tenant) -> str:
    """A tenant's caps in words."""
    cap = "none" if tenant.max_queued is None else str(tenant.max_queued)
    budget = tenant.daily_budget
    spend = "none" if budget is None else usd_text(budget.limit_pico_usd)
    job_cap = tenant.max_job_cost_pico_usd
    job_cost = "none" if job_cap is None else usd_text(job_cap)
    return f"max queued {cap}, daily budget USD {spend}, max job cost USD {job_cost}"


def _pico_usd(flag: str, text: str) -> int:
    """An amount given in dollars, read exactly (never through float), in pico-dollars."""
    try:
        amount = Decimal(text)
    except InvalidOperation:
        raise CliError(f"{flag} takes an amount of dollars, not {text!r}") from None
    if not amount.is_finite() or amount < 0:
        raise CliError(f"{flag} must be 0 or more, not {text!r}")
    return pico_usd(amount)


def _daily_budget(text: str) -> DailyBudget:
    """A budget given in dollars, read exactly (never through float)."""
    return DailyBudget(_pico_usd("--daily-budget-usd", text))


@tenants.command("list")
def list_command(db: DbOption = None) -> None:
    """List the tenants and their caps."""
    table = Table("name", "admin", "max queued", "daily budget USD", "max job cost USD", "created")
    for tenant in with_app(db, list_tenants):
        cap = "-" if tenant.max_queued is None else str(tenant.max_queued)
        budget = tenant.daily_budget
        spend = "-" if budget is None else usd_text(budget.limit_pico_usd)
        job_cap = tenant.max_job_cost_pico_usd
        job_cost = "-" if job_cap is None else usd_text(job_cap)
        admin = "yes" if tenant.admin else ""
        table.add_row(tenant.name, admin, cap, spend, job_cost, iso(tenant.created_at))
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
