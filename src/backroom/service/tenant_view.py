"""What the dashboard's tenants page shows an admin: each tenant's caps, its keys, and its
LLM spend today and day by day."""

from __future__ import annotations

from dataclasses import dataclass

from backroom.core.usage import day_label, day_start, next_day_start
from backroom.service.context import AppParts
from backroom.store.records import KeyInfo, Tenant, UsageGrouping, UsageQuery

DAY_MS = 86_400_000
SPEND_DAYS = 30


@dataclass(frozen=True, slots=True)
class TenantView:
    """One tenant: its settings, its keys (ids only), and its spend per UTC day over the
    last `SPEND_DAYS` days, oldest first (pico-dollars; the last is today)."""

    tenant: Tenant
    keys: tuple[KeyInfo, ...]
    daily_spend: tuple[tuple[str, int], ...]

    @property
    def spent_today(self) -> int:
        """Today's spend so far, in pico-dollars."""
        return self.daily_spend[-1][1] if self.daily_spend else 0

    @property
    def spent_in_window(self) -> int:
        """The spend of every day shown, in pico-dollars."""
        return sum(amount for _, amount in self.daily_spend)


def _days(now: int) -> list[tuple[str, int]]:
    """The UTC dates of the window, oldest first, with their start times."""
    first = day_start(now) - (SPEND_DAYS - 1) * DAY_MS
    starts = [first + index * DAY_MS for index in range(SPEND_DAYS)]
    return [(day_label(start), start) for start in starts]


async def tenant_views(app: AppParts) -> list[TenantView]:
    """Every tenant, by name, with its keys and its spend day by day."""
    now = app.clock.now()
    days = _days(now)
    by_tenant_and_day = (UsageGrouping.TENANT, UsageGrouping.DAY)
    query = UsageQuery(days[0][1], next_day_start(now), by_tenant_and_day)
    spend: dict[tuple[str | None, ...], int] = {
        group.keys: group.totals.cost_pico_usd for group in await app.store.usage_groups(query)
    }
    views = []
    for tenant in await app.store.list_tenants():
        keys = tuple(await app.store.list_keys(tenant.name))
        daily = tuple((label, spend.get((tenant.name, label), 0)) for label, _ in days)
        views.append(TenantView(tenant, keys, daily))
    return views
