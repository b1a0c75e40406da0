"""POST /v1/jobs:batch: each job answered as a single submission would be, in order."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from api_support import Keys, assert_problem, bearer, submit

from backroom import App, JobContext
from backroom.client import AsyncClient, JobRequest, QueueFull, Submitted
from backroom.core.lanes import LaneLimits, LaneRequest
from backroom.core.usage import AttemptUsage, DailyBudget
from backroom.service.api_keys import issue_key


async def batch(http: httpx.AsyncClient, key: str, jobs: list[dict[str, Any]]) -> httpx.Response:
    return await http.post("/v1/jobs:batch", json={"jobs": jobs}, headers=bearer(key))


def job(n: Any, **fields: Any) -> dict[str, Any]:
    return {"task": "echo", "input": n, **fields}


async def test_every_job_gets_its_own_answer_in_order(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    earlier = await submit(http, keys.acme, payload="old", idempotency_key="k-old")
    jobs = [
        job(1, idempotency_key="k-1", priority=3),
        job("old", idempotency_key="k-old"),  # a replay of the job submitted alone
        job(2, priority="high"),  # a bad field: its own 422
        job(3, task="no-such-task"),  # refused as POST /v1/jobs would: 422
        job(4, idempotency_key="k-old"),  # the key again, another body: a conflict
        job(1, idempotency_key="k-1", priority=3),  # a repeat within the batch: a replay
    ]

    response = await batch(http, keys.acme, jobs)

    assert response.status_code == 200
    results = response.json()["results"]
    assert [entry["status"] for entry in results] == [202, 200, 422, 422, 422, 200]
    first = results[0]["job"]
    assert (first["task"], first["priority"], first["tenant"]) == ("echo", 3, "acme")
    assert results[1]["job"]["id"] == earlier.json()["id"]
    assert results[2]["problem"]["errors"][0]["loc"] == ["body", "priority"]
    assert results[3]["problem"]["errors"][0]["loc"] == ["body", "task"]
    assert results[4]["problem"]["type"] == "urn:backroom:problem:idempotency-conflict"
    assert results[5]["job"]["id"] == first["id"]
    assert len(await app.list_jobs()) == 2


async def test_a_retried_batch_replays_every_job(http: httpx.AsyncClient, keys: Keys) -> None:
    jobs = [job(n, idempotency_key=f"k-{n}") for n in range(5)]

    first = (await batch(http, keys.acme, jobs)).json()["results"]
    again = (await batch(http, keys.acme, jobs)).json()["results"]

    assert [entry["status"] for entry in first] == [202] * 5
    assert [entry["status"] for entry in again] == [200] * 5
    assert [entry["job"]["id"] for entry in again] == [entry["job"]["id"] for entry in first]


async def test_the_tenant_cap_refuses_only_the_jobs_beyond_it(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    response = await batch(http, keys.capped, [job(n) for n in range(4)])

    results = response.json()["results"]
    assert [entry["status"] for entry in results] == [202, 202, 429, 429]
    assert results[2]["problem"]["type"] == "urn:backroom:problem:queue-full"
    assert results[2]["retry_after_s"] == 5
    assert len(await app.list_jobs()) == 2


async def test_a_batch_is_one_to_a_thousand_jobs(http: httpx.AsyncClient, keys: Keys) -> None:
    empty = await batch(http, keys.acme, [])
    too_many = await batch(http, keys.acme, [job(n) for n in range(1001)])
    unauthenticated = await http.post("/v1/jobs:batch", json={"jobs": [job(1)]})

    assert assert_problem(empty, 422, "validation-error")["errors"][0]["loc"] == ["body", "jobs"]
    assert_problem(too_many, 422, "validation-error")
    assert_problem(unauthenticated, 401)


async def test_the_client_submits_many_and_hands_back_each_refusal(
    api: Any, keys: Keys, app: App
) -> None:
    transport = httpx.ASGITransport(api)
    async with AsyncClient("http://backroom.test", keys.capped, transport=transport) as client:
        results = await client.submit_many([JobRequest("echo", n) for n in range(3)])
        retried = await client.submit_many(
            [
                JobRequest("echo", n, key=result.idempotency_key)
                for n, result in enumerate(results[:2])
                if isinstance(result, Submitted)
            ]
        )

    assert [type(result) for result in results] == [Submitted, Submitted, QueueFull]
    assert [result.created for result in retried if isinstance(result, Submitted)] == [False, False]
    assert isinstance(results[2], QueueFull) and results[2].retry_after_s == 5


async def test_a_spent_budget_refuses_only_the_jobs_in_a_lane(
    http: httpx.AsyncClient, app: App
) -> None:
    @app.task("ask", lane_request=lambda _: LaneRequest("mock/gpt", LaneLimits(4, 60, 6_000), 100))
    async def ask(_ctx: JobContext, payload: Any) -> Any:
        return payload

    _, key = await issue_key(app, "thrifty", daily_budget=DailyBudget.of_usd(Decimal("0.01")))
    before = await batch(http, key, [job("q", task="ask", idempotency_key="k1")])
    spent = AttemptUsage(
        1, 1, "thrifty", "big", None, 100, 10, 50, 10**10, app.clock.now(), lease_token=1
    )
    await app.store.record_usage(spent)

    after = await batch(
        http,
        key,
        [job("q", task="ask", idempotency_key="k1"), job("r", task="ask"), job("plain")],
    )

    assert before.json()["results"][0]["status"] == 202
    results = after.json()["results"]
    assert [entry["status"] for entry in results] == [200, 429, 202]
    assert results[1]["problem"]["type"] == "urn:backroom:problem:budget-exhausted"
    assert results[1]["retry_after_s"] > 0
