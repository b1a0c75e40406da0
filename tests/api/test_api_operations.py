"""Health, readiness, metrics, and the problem documents of unknown routes and methods."""

from __future__ import annotations

import httpx
from api_support import Keys, assert_problem, submit
from prometheus_client.parser import text_string_to_metric_families

from backroom import App, StoreUnavailable, run_until_idle
from backroom.api import create_api
from backroom.store.sqlite.store import SqliteStore


async def test_healthz_and_readyz_answer_ok(http: httpx.AsyncClient) -> None:
    assert (await http.get("/healthz")).json() == {"status": "ok"}
    assert (await http.get("/readyz")).json() == {"status": "ready"}


class _UnreachableStore(SqliteStore):
    async def get(self, job_id: int, tenant: str | None = None) -> None:
        raise StoreUnavailable("the disk went away")


async def test_readyz_is_503_when_the_store_does_not_answer() -> None:
    api = create_api(App(store=_UnreachableStore(":memory:")))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(api), base_url="http://t") as http:
        response = await http.get("/readyz")

    problem = assert_problem(response, 503, "store-unavailable")
    assert "the disk went away" in problem["detail"]


async def test_metrics_report_queue_lengths_and_failures(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    await submit(http, keys.acme, task="boom")
    await run_until_idle(app)
    await submit(http, keys.acme, queue="batch")

    response = await http.get("/metrics")

    assert response.headers["content-type"].startswith("text/plain")
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }
    assert samples["backroom_jobs", (("queue", "batch"), ("state", "queued"))] == 1
    assert samples["backroom_jobs", (("queue", "interactive"), ("state", "failed"))] == 1
    assert samples["backroom_recent_failure_ratio", (("queue", "interactive"),)] == 1.0
    assert ("backroom_oldest_queued_job_age_seconds", (("queue", "batch"),)) in samples


async def test_unknown_routes_and_methods_are_problems(http: httpx.AsyncClient) -> None:
    assert_problem(await http.get("/v2/nothing"), 404)
    wrong_method = await http.delete("/v1/jobs")
    assert_problem(wrong_method, 405)
    assert "POST" in wrong_method.headers["allow"]


async def test_the_openapi_document_describes_problems(http: httpx.AsyncClient) -> None:
    document = (await http.get("/openapi.json")).json()

    assert "Problem" in document["components"]["schemas"]
    submit_responses = document["paths"]["/v1/jobs"]["post"]["responses"]
    assert set(submit_responses) == {"200", "202", "401", "413", "422", "429"}
    assert "application/problem+json" in submit_responses["429"]["content"]
    assert (await http.get("/docs")).status_code == 200
