"""The LLM side of the API: GET /v1/lanes (admin), GET /v1/usage, the daily budget at
submit (429 budget-exhausted), and a job's usage in its document."""

from __future__ import annotations

import asyncio
import re
from decimal import Decimal
from typing import Any

import httpx
import pytest
from api_support import ADMIN_KEY, Keys, assert_problem, bearer, submit

from backroom import App, JobContext, WorkerConfig
from backroom.core.job import NewJob
from backroom.core.lane_settlement import LaneSettlement
from backroom.core.lanes import LaneLimits, LaneRequest
from backroom.core.usage import DAY_MS, AttemptUsage, DailyBudget, day_start, next_day_start
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.task import register_llm_tasks
from backroom.service.api_keys import issue_key
from backroom.service.documents import iso

LANE = "mock/gpt"
LIMITS = LaneLimits(max_concurrency=4, requests_per_minute=60, tokens_per_minute=6_000)


def lane_request(payload: Any) -> LaneRequest | None:
    """Jobs of `ask` run in LANE, unless their input says `no lane`."""
    return None if payload == "no lane" else LaneRequest(LANE, LIMITS, 100)


@pytest.fixture(autouse=True)
def ask_task(app: App) -> None:
    """`ask`: a task with a lane, as `llm.respond` is."""

    @app.task("ask", lane_request=lane_request)
    async def ask(_ctx: JobContext, payload: Any) -> Any:
        return payload


def usage(job_id: int, tenant: str, model: str, cost: int, at: int) -> AttemptUsage:
    return AttemptUsage(job_id, 1, tenant, model, None, 100, 10, 50, cost, at, lease_token=1)


async def test_only_an_admin_sees_the_lanes(http: httpx.AsyncClient, keys: Keys, app: App) -> None:
    job = (await app.submit("ask", "hi")).job
    (claimed,) = await app.store.claim([], 1, "w1", 30_000, app.clock.now())
    now = app.clock.now()
    await app.store.lane_acquire(claimed.lease, LaneRequest(LANE, LIMITS, 100), now)
    await app.store.lane_settle(
        claimed.lease, LaneSettlement(LANE, now, used_tokens=0, pause_until=now + 60_000), now
    )

    assert_problem(await http.get("/v1/lanes"), 401)
    assert_problem(await http.get("/v1/lanes", headers=bearer(keys.acme)), 403)
    for key in (keys.root, ADMIN_KEY):
        response = await http.get("/v1/lanes", headers=bearer(key))
        assert response.status_code == 200
        (lane,) = response.json()["lanes"]
        assert lane["name"] == LANE
        assert lane["limits"] == {
            "max_concurrency": 4,
            "requests_per_minute": 60,
            "tokens_per_minute": 6_000,
        }
        assert lane["in_flight"] == 0
        # One request taken; the bucket refills one a second, and a loaded machine may
        # take that long between the call and this read.
        assert lane["requests_left"] in (59, 60)
        assert lane["paused_until"] is not None
    assert job.lane == LANE


async def seed_usage(app: App) -> int:
    """Usage of two tenants on two days; the start of the first day."""
    day = day_start(app.clock.now()) - DAY_MS
    await app.store.record_usage(usage(1, "acme", "big", 1_500_000, day))
    await app.store.record_usage(usage(2, "acme", "small", 500_000, day + DAY_MS))
    await app.store.record_usage(usage(3, "globex", "big", 1_000_000, day + DAY_MS))
    return day


async def test_a_tenant_sees_its_own_usage_by_model(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    day = await seed_usage(app)
    since = f"{(day - 1) // 1000}"

    response = await http.get(f"/v1/usage?from={since}", headers=bearer(keys.acme))

    assert response.status_code == 200
    report = response.json()
    assert report["group_by"] == ["tenant", "model"]
    assert [(group["tenant"], group["model"]) for group in report["groups"]] == [
        ("acme", "big"),
        ("acme", "small"),
    ]
    assert report["groups"][0]["cost_usd"] == "0.0000015"
    assert report["total"] == {
        "calls": 2,
        "input_tokens": 200,
        "cached_tokens": 20,
        "cache_write_tokens": 0,
        "output_tokens": 100,
        "cost_usd": "0.000002",
        "unpriced_calls": 0,
        "estimated_calls": 0,
    }


async def test_an_admin_sees_every_tenant_by_day(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    await seed_usage(app)

    response = await http.get(
        "/v1/usage",
        params={"from": "2000-01-01", "to": "2100-01-01T00:00:00Z", "group_by": "tenant,day"},
        headers=bearer(ADMIN_KEY),
    )

    assert response.status_code == 200
    groups = response.json()["groups"]
    assert [(group["tenant"], group["calls"]) for group in groups] == [
        ("acme", 1),
        ("acme", 1),
        ("globex", 1),
    ]
    assert groups[0]["day"] < groups[1]["day"] == groups[2]["day"]
    assert response.json()["total"]["cost_usd"] == "0.000003"


async def test_todays_usage_is_the_default_range(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    await seed_usage(app)

    report = (await http.get("/v1/usage", headers=bearer(keys.acme))).json()

    assert [group["model"] for group in report["groups"]] == ["small"]


async def test_an_empty_or_backward_range_is_refused(http: httpx.AsyncClient, keys: Keys) -> None:
    response = await http.get(
        "/v1/usage", params={"from": "2024-05-02", "to": "2024-05-01"}, headers=bearer(keys.acme)
    )
    assert_problem(response, 422, "validation-error")
    for wrong, says in [
        ("week", "unknown dimension 'week'; use tenant, provider, model, prompt_version, day"),
        ("model,model", "name each dimension once"),
        ("", "name at least one dimension"),
        ("metadata.a$b", "a metadata key is 1-64 of"),
    ]:
        response = await http.get(
            "/v1/usage", params={"group_by": wrong}, headers=bearer(keys.acme)
        )
        assert_problem(response, 422, "validation-error")
        assert says in response.json()["detail"]


async def test_a_spent_budget_refuses_jobs_with_a_lane_until_midnight(
    http: httpx.AsyncClient, app: App
) -> None:
    _, key = await issue_key(app, "thrifty", daily_budget=DailyBudget.of_usd(Decimal("0.01")))
    assert (await submit(http, key, "ask", "before", idempotency_key="k1")).status_code == 202
    now = app.clock.now()
    await app.store.record_usage(usage(1, "thrifty", "big", 10**10, now))
    # The job already stored is still answered for its key.
    replay = await submit(http, key, "ask", "before", idempotency_key="k1")
    assert (replay.status_code, replay.headers["idempotent-replayed"]) == (200, "true")

    refused = await submit(http, key, "ask", "after")

    problem = assert_problem(refused, 429, "budget-exhausted")
    assert "$0.01" in problem["detail"]
    retry_after = int(refused.headers["retry-after"])
    assert 0 < retry_after <= -(-(next_day_start(now) - now) // 1000)
    # Jobs that make no LLM call are still welcome.
    assert (await submit(http, key, "echo", "plain")).status_code == 202
    assert (await submit(http, key, "ask", "no lane")).status_code == 202


async def test_a_job_in_a_lane_shows_its_usage(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    created = (await submit(http, keys.acme, "ask", "hi")).json()
    plain = (await submit(http, keys.acme, "echo", "hi")).json()
    await app.store.record_usage(usage(created["id"], "acme", "big", 2_500_000, 0))

    document = (await http.get(f"/v1/jobs/{created['id']}", headers=bearer(keys.acme))).json()
    other = (await http.get(f"/v1/jobs/{plain['id']}", headers=bearer(keys.acme))).json()

    assert document["usage"] == {
        "calls": 1,
        "input_tokens": 100,
        "cached_tokens": 10,
        "cache_write_tokens": 0,
        "output_tokens": 50,
        "cost_usd": "0.0000025",
        "unpriced_calls": 0,
        "estimated_calls": 0,
    }
    assert "usage" not in other


async def test_a_job_waiting_for_its_budget_says_so_and_counts_in_the_queue_age(
    http: httpx.AsyncClient, app: App
) -> None:
    _, key = await issue_key(app, "thrifty", daily_budget=DailyBudget.of_usd(Decimal("0.01")))
    now = app.clock.now()
    await app.store.record_usage(usage(1, "thrifty", "big", 10**10, now))
    # Due a minute ago: by the time its budget holds it back, it has waited that long.
    new = NewJob("ask", "hi", now - 60_000, tenant="thrifty", lane=LANE)
    job = (await app.store.submit(new, now)).job
    worker = app.worker(WorkerConfig(poll_interval_ms=10))
    running = asyncio.create_task(worker.run())
    try:
        async with asyncio.timeout(20):
            while "waiting" not in (document := await read_job(http, key, job.id)):
                await asyncio.sleep(0.01)
    finally:
        worker.stop()
        await running

    assert (document["status"], document["attempts"]) == ("queued", 0)
    assert document["waiting"] == {
        "reason": "budget",
        "until": iso(next_day_start(now)),
        "since": iso(now - 60_000),
    }
    assert document["next_attempt_at"] == document["waiting"]["until"]
    metrics = (await http.get("/metrics")).text
    found = re.search(r'^backroom_oldest_queued_job_age_seconds\{queue="interactive"\} (\S+)$',
                      metrics, re.MULTILINE)  # fmt: skip
    assert found is not None
    assert float(found.group(1)) >= 60


async def read_job(http: httpx.AsyncClient, key: str, job_id: int) -> dict[str, Any]:
    response = await http.get(f"/v1/jobs/{job_id}", headers=bearer(key))
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return document


def configured(app: App) -> None:
    """`llm.respond` on a provider that lists two models, and one that takes any."""
    strict = ProviderConfig("strict", "http://127.0.0.1:9/v1", models=(ModelConfig("small"),
                            ModelConfig("large")))  # fmt: skip
    loose = ProviderConfig("loose", "http://127.0.0.1:9/v1", any_model=True)
    register_llm_tasks(app, LLMConfig((strict, loose), default_provider="strict"))


async def test_llm_jobs_may_name_only_configured_models(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    configured(app)

    typo = await submit(http, keys.acme, "llm.respond", {"model": "smal", "input": "hi"})
    nowhere = await submit(
        http, keys.acme, "llm.respond", {"model": "small", "input": "hi", "provider": "gone"}
    )
    listed = await submit(http, keys.acme, "llm.respond", {"model": "large", "input": "hi"})
    anything = await submit(
        http, keys.acme, "llm.respond", {"model": "any-1", "input": "hi", "provider": "loose"}
    )

    problem = assert_problem(typo, 422, "validation-error")
    assert problem["models"] == ["small", "large"]
    assert problem["provider"] == "strict"
    assert problem["errors"][0]["loc"] == ["body", "input", "model"]
    assert "model 'smal' is not configured for LLM provider 'strict'" in problem["detail"]
    assert assert_problem(nowhere, 422, "validation-error")["providers"] == ["strict", "loose"]
    assert (listed.status_code, listed.json()["status"]) == (202, "queued")
    assert anything.status_code == 202
    # Refused jobs made no lane: only the two accepted ones are in a lane at all.
    lanes = {job.lane for job in await app.list_jobs()}
    assert lanes == {"strict/large", "loose/any-1"}
