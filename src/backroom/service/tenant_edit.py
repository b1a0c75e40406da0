"""Changing a tenant's caps and budgets over HTTP and in the dashboard: `edit_tenant`.

The operation `backroom tenants update` runs (`tenant_admin.update_tenant`), behind
the checks of a caller: only an admin changes a tenant (a read-only key never does),
only the settings given change, and an amount of money is read exactly (never through
a float). `caps_from_form` reads the dashboard's form into the same `CapsChange`.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from backroom.core.usage import DailyBudget, pico_usd
from backroom.service.api_keys import UnknownTenant
from backroom.service.callers import Caller, refuse_read_only
from backroom.service.context import AppParts
from backroom.service.documents import iso, usd_text
from backroom.service.replies import Reply, invalid_field, problem
from backroom.service.tenant_admin import KEEP, Keep, update_tenant
from backroom.store.records import Tenant

__all__ = ["CapsChange", "caps_from_form", "edit_tenant", "tenant_document"]


@dataclass(frozen=True, slots=True)
class CapsChange:
    """The settings to change (`KEEP`: as they are; None: no cap): the cap of queued or
    running jobs, the LLM budget per UTC day and the cap of one job's LLM cost, in USD."""

    max_queued: int | Keep | None = KEEP
    daily_budget_usd: Decimal | Keep | None = KEEP
    max_job_cost_usd: Decimal | Keep | None = KEEP

    def changes_nothing(self) -> bool:
        """True when every setting is kept."""
        settings = (self.max_queued, self.daily_budget_usd, self.max_job_cost_usd)
        return all(isinstance(setting, Keep) for setting in settings)


def tenant_document(tenant: Tenant) -> dict[str, Any]:
    """A tenant's settings as plain data (money as exact decimal strings of dollars)."""
    budget, job_cap = tenant.daily_budget, tenant.max_job_cost_pico_usd
    return {
        "name": tenant.name,
        "admin": tenant.admin,
        "created_at": iso(tenant.created_at),
        "max_queued": tenant.max_queued,
        "daily_budget_usd": None if budget is None else usd_text(budget.limit_pico_usd),
        "max_job_cost_usd": None if job_cap is None else usd_text(job_cap),
    }


def _bad_setting(change: CapsChange) -> Reply | None:
    """The 422 of a setting out of range, or None."""
    cap = change.max_queued
    if isinstance(cap, int) and cap < 1:
        return invalid_field(("body", "max_queued"), "must be 1 or more (null: no cap)")
    for field in ("daily_budget_usd", "max_job_cost_usd"):
        amount = getattr(change, field)
        if isinstance(amount, Decimal) and (not amount.is_finite() or amount < 0):
            return invalid_field(("body", field), "must be 0 or more dollars (null: no cap)")
    return None


def _pico(amount: Decimal | Keep | None) -> int | Keep | None:
    return amount if amount is None or isinstance(amount, Keep) else pico_usd(amount)


async def edit_tenant(app: AppParts, caller: Caller, name: str, change: CapsChange) -> Reply:
    """Change the given settings of tenant `name` (admin only); the tenant after."""
    if not caller.admin:
        return problem(403, "only an admin may change a tenant's caps and budgets")
    refused = refuse_read_only(caller)
    if refused is not None:
        return refused
    if change.changes_nothing():
        return problem(
            422,
            "nothing to change: give max_queued, daily_budget_usd or max_job_cost_usd",
            kind="validation-error",
        )
    bad = _bad_setting(change)
    if bad is not None:
        return bad
    budget = _pico(change.daily_budget_usd)
    try:
        tenant = await update_tenant(
            app,
            name,
            max_queued=change.max_queued,
            daily_budget=budget if not isinstance(budget, int) else DailyBudget(budget),
            max_job_cost_pico_usd=_pico(change.max_job_cost_usd),
        )
    except UnknownTenant:
        return problem(404, f"no tenant is called {name!r}")
    return Reply(200, tenant_document(tenant))


class FormError(ValueError):
    """A dashboard form field that is not a number of the kind it asks for."""


def _form_amount(label: str, text: str | None) -> Decimal | None:
    if text is None or not text.strip():
        return None
    try:
        return Decimal(text.strip())
    except InvalidOperation:
        raise FormError(f"{label} takes an amount of dollars, not {text!r}") from None


def caps_from_form(max_queued: str | None, budget: str | None, job_cost: str | None) -> CapsChange:
    """The dashboard form's fields as a change of every setting (empty: no cap).

    Raises `FormError` for a field that is not a number.
    """
    cap: int | None = None
    if max_queued is not None and max_queued.strip():
        try:
            cap = int(max_queued.strip())
        except ValueError:
            raise FormError(f"the jobs cap takes a whole number, not {max_queued!r}") from None
    return CapsChange(
        cap,
        _form_amount("the daily budget", budget),
        _form_amount("the job cost cap", job_cost),
    )
