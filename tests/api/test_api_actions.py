"""Cancel, the dead-letter list and redrive, through the API."""

from __future__ import annotations

import httpx
import pytest
from api_support import Keys, assert_problem, bearer, submit

from backroom import App, run_until_idle


async def test_cancelling_a_queued_job_cancels_it_and_may_be_repeated(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    job_id = (await submit(http, keys.acme)).json()["id"]

    first = await http.post(f"/v1/jobs/{job_id}/cancel", headers=bearer(keys.acme))
    again = await http.post(f"/v1/jobs/{job_id}/cancel", headers=bearer(keys.acme))

    assert (first.status_code, again.status_code) == (200, 200)
    assert first.json()["status"] == again.json()["status"] == "cancelled"


async def test_cancelling_a_running_job_asks_its_worker_to_stop(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    job_id = (await submit(http, keys.acme)).json()["id"]
    await app.store.claim([], 1, "worker-1", 30_000, app.clock.now())

    response = await http.post(f"/v1/jobs/{job_id}/cancel", headers=bearer(keys.acme))

    assert response.status_code == 202
    assert response.json()["status"] == "running"


async def test_a_finished_job_cannot_be_cancelled(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    job_id = (await submit(http, keys.acme)).json()["id"]
    await run_until_idle(app)

    response = await http.post(f"/v1/jobs/{job_id}/cancel", headers=bearer(keys.acme))

    problem = assert_problem(response, 409, "job-state-conflict")
    assert problem["job_status"] == "succeeded"


async def test_cancelling_an_unknown_job_is_404(http: httpx.AsyncClient, keys: Keys) -> None:
    assert_problem(await http.post("/v1/jobs/999/cancel", headers=bearer(keys.acme)), 404)


async def test_failed_jobs_are_listed_and_redriven_one_by_one(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    boom = (await submit(http, keys.acme, task="boom")).json()["id"]
    echo = (await submit(http, keys.acme)).json()["id"]
    await run_until_idle(app)

    letters = (await http.get("/v1/dead-letters", headers=bearer(keys.acme))).json()
    redriven = await http.post(f"/v1/dead-letters/{boom}/redrive", headers=bearer(keys.acme))
    not_failed = await http.post(f"/v1/dead-letters/{echo}/redrive", headers=bearer(keys.acme))
    unknown = await http.post("/v1/dead-letters/999/redrive", headers=bearer(keys.acme))

    assert [job["id"] for job in letters["jobs"]] == [boom]
    assert letters["jobs"][0]["last_error"]["message"] == "boom"
    assert redriven.status_code == 200
    assert redriven.json()["status"] == "queued"
    assert redriven.json()["attempts"] == 0
    assert_problem(not_failed, 409, "job-state-conflict")
    assert_problem(unknown, 404)


async def test_a_bulk_redrive_takes_every_failed_job_or_those_of_a_task(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    batch = (await submit(http, keys.acme, task="boom", queue="batch")).json()["id"]
    interactive = (await submit(http, keys.acme, task="boom")).json()["id"]
    await run_until_idle(app)

    by_queue = await http.post(
        "/v1/dead-letters/redrive", json={"queue": "batch"}, headers=bearer(keys.acme)
    )
    await run_until_idle(app)
    everything = await http.post(
        "/v1/dead-letters/redrive", json={"all": True}, headers=bearer(keys.acme)
    )

    assert by_queue.json() == {"redriven": 1, "job_ids": [batch]}
    assert sorted(everything.json()["job_ids"]) == [batch, interactive]


@pytest.mark.parametrize(
    "body",
    [None, {}, {"all": False}, {"all": "true"}, {"all": True, "task": "boom"}],
    ids=["no-body", "empty", "all-false", "all-string", "all-and-filter"],
)
async def test_a_bulk_redrive_needs_all_true_or_a_filter(
    http: httpx.AsyncClient, keys: Keys, app: App, body: dict[str, object] | None
) -> None:
    """Issue 9, item 6: an empty body once redrove every failed job."""
    failed = (await submit(http, keys.acme, task="boom")).json()["id"]
    await run_until_idle(app)

    response = await http.post("/v1/dead-letters/redrive", json=body, headers=bearer(keys.acme))

    assert_problem(response, 422, "validation-error")
    assert (await http.get(f"/v1/jobs/{failed}", headers=bearer(keys.acme))).json()[
        "status"
    ] == "failed"


async def test_a_bulk_redrive_refuses_unknown_fields(http: httpx.AsyncClient, keys: Keys) -> None:
    response = await http.post(
        "/v1/dead-letters/redrive", json={"tenant": "x"}, headers=bearer(keys.acme)
    )

    assert_problem(response, 422, "validation-error")
