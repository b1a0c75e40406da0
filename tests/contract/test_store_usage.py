"""Contract: LLM usage per attempt, spend in a window, usage reports, tenant budgets."""

from __future__ import annotations

from decimal import Decimal

from contract_support import T0

from backroom.core.usage import DAY_MS, AttemptUsage, DailyBudget, UsageTotals
from backroom.store.protocol import Store, Tenant
from backroom.store.records import MetadataKey, UsageGroup, UsageGrouping, UsageQuery


def usage(
    job_id: int,
    *,
    attempt: int = 1,
    lease_token: int | None = None,
    tenant: str = "acme",
    model: str = "gpt",
    cost: int | None = 1_500,
    at: int = T0,
    provider: str | None = "openai",
    prompt_version: str | None = "v1",
    metadata: dict[str, object] | None = None,
) -> AttemptUsage:
    return AttemptUsage(
        job_id,
        attempt,
        tenant,
        model,
        prompt_version,
        100,
        20,
        50,
        cost,
        at,
        provider=provider,
        metadata=metadata or {},
        lease_token=attempt if lease_token is None else lease_token,
    )


async def test_usage_is_recorded_once_per_attempt_and_summed_per_job(store: Store) -> None:
    await store.record_usage(usage(1, cost=1_000))
    await store.record_usage(usage(1, cost=1_500))  # the same attempt again: replaced
    await store.record_usage(usage(1, attempt=2, cost=None))
    await store.record_usage(usage(2))

    assert await store.usage_totals(1) == UsageTotals(2, 200, 40, 100, 1_500, unpriced_calls=1)
    assert await store.usage_totals(3) == UsageTotals()


async def test_spend_counts_the_tenants_calls_in_the_window(store: Store) -> None:
    await store.record_usage(usage(1, at=T0))
    await store.record_usage(usage(2, at=T0 + 999))
    await store.record_usage(usage(3, at=T0 + 1_000))
    await store.record_usage(usage(4, tenant="globex", at=T0))

    assert await store.spent_pico_usd("acme", T0, T0 + 1_000) == 3_000
    assert await store.spent_pico_usd("nobody", T0, T0 + 1_000) == 0


async def test_usage_groups_by_tenant_and_model_and_by_day(store: Store) -> None:
    day = T0 - T0 % DAY_MS
    await store.record_usage(usage(1, model="big", at=day))
    await store.record_usage(usage(2, model="small", at=day + 5))
    await store.record_usage(usage(3, model="big", at=day + DAY_MS))
    await store.record_usage(usage(4, tenant="globex", model="big", at=day))
    one, two = UsageTotals(1, 100, 20, 50, 1_500), UsageTotals(2, 200, 40, 100, 3_000)
    tenant, model = UsageGrouping.TENANT, UsageGrouping.MODEL

    by_model = UsageQuery(day, day + 2 * DAY_MS, (tenant, model), "acme")
    assert await store.usage_groups(by_model) == [
        UsageGroup(("acme", "big"), two),
        UsageGroup(("acme", "small"), one),
    ]
    every_day = UsageQuery(day, day + 2 * DAY_MS, (tenant, UsageGrouping.DAY))
    assert await store.usage_groups(every_day) == [
        UsageGroup(("acme", "2023-11-14"), two),
        UsageGroup(("acme", "2023-11-15"), one),
        UsageGroup(("globex", "2023-11-14"), one),
    ]
    days_only = UsageQuery(day, day + 2 * DAY_MS, (UsageGrouping.DAY,))
    assert await store.usage_groups(days_only) == [
        UsageGroup(("2023-11-14",), UsageTotals(3, 300, 60, 150, 4_500)),
        UsageGroup(("2023-11-15",), one),
    ]


async def test_usage_groups_by_provider_prompt_version_and_metadata_keys(store: Store) -> None:
    await store.record_usage(usage(1, provider="openai", metadata={"team": "search", "n": 1}))
    await store.record_usage(usage(2, provider="azure", metadata={"team": "search"}))
    await store.record_usage(usage(3, provider="openai", metadata={"team": "ads", "n": 1}))
    await store.record_usage(usage(4, provider=None, prompt_version=None, cost=None))
    await store.record_usage(
        usage(5, provider="openai", metadata={"team": {"b": [True, None], "a": 2.5}})
    )
    one = UsageTotals(1, 100, 20, 50, 1_500)
    unpriced = UsageTotals(1, 100, 20, 50, 0, unpriced_calls=1)
    team, n = MetadataKey("team"), MetadataKey("n")
    provider, version = UsageGrouping.PROVIDER, UsageGrouping.PROMPT_VERSION

    by_team = UsageQuery(T0, T0 + 1, (provider, team))
    assert await store.usage_groups(by_team) == [
        UsageGroup((None, None), unpriced),
        UsageGroup(("azure", "search"), one),
        UsageGroup(("openai", "ads"), one),
        UsageGroup(("openai", "search"), one),
        # A value that is not a string is its compact JSON, keys sorted.
        UsageGroup(("openai", '{"a":2.5,"b":[true,null]}'), one),
    ]
    by_two_keys = UsageQuery(T0, T0 + 1, (n, version, team), "acme")
    groups = await store.usage_groups(by_two_keys)
    assert [group.keys for group in groups] == [
        (None, None, None),
        (None, "v1", "search"),
        (None, "v1", '{"a":2.5,"b":[true,null]}'),
        ("1", "v1", "ads"),
        ("1", "v1", "search"),
    ]
    # A key with a quote or a path's syntax in it is bound, never spliced in.
    odd = UsageQuery(T0, T0 + 1, (MetadataKey("x'; DROP TABLE llm_usage; --"),))
    assert [group.keys for group in await store.usage_groups(odd)] == [(None,)]
    assert await store.usage_totals(1) == one


async def test_a_tenants_daily_budget_is_exact(store: Store) -> None:
    budget = DailyBudget.of_usd(Decimal("0.000000123456"))
    tenant = Tenant("acme", created_at=T0, daily_budget=budget)
    await store.create_tenant(tenant, "hash-1")

    assert await store.get_tenant("acme") == tenant
    assert budget.limit_pico_usd == 123_456
    assert await store.get_tenant("nobody") is None
