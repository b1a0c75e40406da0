"""Health, readiness, metrics, and the problem documents of unknown routes and methods."""

from __future__ import annotations

import httpx
import pytest
from api_support import ADMIN_KEY, Keys, assert_problem, bearer, submit
from prometheus_client.parser import text_string_to_metric_families

from backroom import App, StoreUnavailable, run_until_idle
from backroom.api import ApiSettings, create_api
from backroom.core.job import Job
from backroom.store.protocol import JobFilter
from backroom.store.sqlite.store import SqliteStore


async def test_healthz_and_readyz_answer_ok(http: httpx.AsyncClient) -> None:
    assert (await http.get("/healthz")).json() == {"status": "ok"}
    assert (await http.get("/readyz")).json() == {"status": "ready"}


INFRASTRUCTURE = "PostgreSQL is unreachable: connect to 10.1.2.3:5432 failed"


class _UnreachableStore(SqliteStore):
    async def get(self, job_id: int, tenant: str | None = None) -> None:
        raise StoreUnavailable(INFRASTRUCTURE)

    async def list_jobs(self, where: JobFilter) -> list[Job]:
        raise StoreUnavailable(INFRASTRUCTURE)


async def test_a_503_names_no_database_host_or_port(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 9, item 5: the cause of a 503 (host, port, path) stays in the server's log."""
    api = create_api(App(store=_UnreachableStore(":memory:")), ApiSettings(admin_key=ADMIN_KEY))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(api), base_url="http://t") as http:
        ready = await http.get("/readyz")
        listing = await http.get("/v1/jobs", headers=bearer(ADMIN_KEY))

    for response in (ready, listing):
        assert_problem(response, 503, "store-unavailable")
        assert "10.1.2.3" not in response.text
        assert "5432" not in response.text
    assert "10.1.2.3:5432" in caplog.text


async def test_a_trailing_slash_is_not_redirected_to_the_host_header(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    """Issue 9, item 5: the redirect's Location was built from the client's Host."""
    response = await http.get(
        "/v1/jobs/", headers=bearer(keys.acme, Host="evil.example"), follow_redirects=False
    )

    assert_problem(response, 404)
    assert "location" not in response.headers


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
    # Issue 9, item 7: the Allow header named only the first route of the path (POST).
    assert wrong_method.headers["allow"] == "GET, POST"
    one_job = await http.post("/v1/jobs/1")
    assert_problem(one_job, 405)
    assert one_job.headers["allow"] == "GET"


@pytest.mark.parametrize("job_id", ["1.0", "+1", "01", "1e0", "0x1", "%201"])
async def test_only_the_canonical_decimal_id_names_a_job(
    http: httpx.AsyncClient, keys: Keys, job_id: str
) -> None:
    """Issue 9, item 7: `/v1/jobs/1.0`, `/+1` and `/01` all meant job 1."""
    assert (await submit(http, keys.acme)).json()["id"] == 1
    assert (await http.get("/v1/jobs/1", headers=bearer(keys.acme))).status_code == 200

    response = await http.get(f"/v1/jobs/{job_id}", headers=bearer(keys.acme))

    assert response.status_code in (404, 422), response.text
    cancel = await http.post(f"/v1/jobs/{job_id}/cancel", headers=bearer(keys.acme))
    assert cancel.status_code in (404, 422), cancel.text


async def test_the_openapi_document_states_the_idempotency_key_limits(
    http: httpx.AsyncClient,
) -> None:
    """Issue 9, item 7: the header's limits were only in its prose."""
    document = (await http.get("/openapi.json")).json()

    parameters = document["paths"]["/v1/jobs"]["post"]["parameters"]
    (key,) = [p for p in parameters if p["name"] == "Idempotency-Key"]
    schema = key["schema"]["anyOf"][0]
    assert (schema["minLength"], schema["maxLength"]) == (1, 512)
    assert schema["pattern"] == "^[ -~]+$"


async def test_the_openapi_document_describes_problems(http: httpx.AsyncClient) -> None:
    document = (await http.get("/openapi.json")).json()

    assert "Problem" in document["components"]["schemas"]
    submit_responses = document["paths"]["/v1/jobs"]["post"]["responses"]
    assert set(submit_responses) == {"200", "202", "401", "413", "422", "429"}
    assert "application/problem+json" in submit_responses["429"]["content"]
    assert (await http.get("/docs")).status_code == 200
