"""GET /v1/jobs/{id} and GET /v1/jobs: documents, history, filters and pagination."""

from __future__ import annotations

import httpx
import pytest
from api_support import Keys, assert_problem, bearer, submit

from backroom import App, run_until_idle


async def test_a_succeeded_job_shows_its_result_and_history(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    job_id = (await submit(http, keys.acme, payload={"n": 1})).json()["id"]
    await run_until_idle(app)

    response = await http.get(f"/v1/jobs/{job_id}", headers=bearer(keys.acme))

    assert response.status_code == 200
    job = response.json()
    assert job["status"] == "succeeded"
    assert job["result"] == {"n": 1}
    assert job["attempts"] == 1
    assert job["started_at"] is not None
    assert job["finished_at"] is not None
    assert [attempt["outcome"] for attempt in job["attempt_history"]] == ["succeeded"]


async def test_a_failed_job_says_after_how_many_attempts_and_why(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    job_id = (await submit(http, keys.acme, task="boom")).json()["id"]
    await run_until_idle(app)

    job = (await http.get(f"/v1/jobs/{job_id}", headers=bearer(keys.acme))).json()

    assert job["status"] == "failed"
    assert job["error"] == "failed after 1 attempts: Permanent: boom"
    assert job["last_error"] == {"type": "Permanent", "message": "boom"}
    assert "result" not in job


async def test_a_queued_job_says_when_it_runs_next(http: httpx.AsyncClient, keys: Keys) -> None:
    created = (await submit(http, keys.acme, delay_s=60)).json()

    assert created["next_attempt_at"] > created["created_at"]


async def test_an_unknown_job_is_404(http: httpx.AsyncClient, keys: Keys) -> None:
    assert_problem(await http.get("/v1/jobs/12345", headers=bearer(keys.acme)), 404)


@pytest.mark.parametrize("job_id", ["0", "-1", "abc", str(2**63)])
async def test_a_malformed_job_id_is_422(http: httpx.AsyncClient, keys: Keys, job_id: str) -> None:
    response = await http.get(f"/v1/jobs/{job_id}", headers=bearer(keys.acme))

    problem = assert_problem(response, 422, "validation-error")
    assert problem["errors"][0]["loc"] == ["path", "job_id"]


async def test_the_list_is_newest_first_and_pages_with_a_cursor(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    ids = [(await submit(http, keys.acme, payload=n)).json()["id"] for n in range(5)]
    seen: list[int] = []
    cursor = None
    while True:
        params = {"limit": "2"} | ({} if cursor is None else {"cursor": cursor})
        page = (await http.get("/v1/jobs", params=params, headers=bearer(keys.acme))).json()
        seen += [job["id"] for job in page["jobs"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break

    assert seen == ids[::-1]


async def test_the_list_filters_by_status_queue_and_task(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    echo = (await submit(http, keys.acme, queue="batch")).json()["id"]
    boom = (await submit(http, keys.acme, task="boom")).json()["id"]
    await run_until_idle(app)
    waiting = (await submit(http, keys.acme, delay_s=60)).json()["id"]

    async def listed(**params: str | list[str]) -> list[int]:
        page = await http.get("/v1/jobs", params=params, headers=bearer(keys.acme))
        return [job["id"] for job in page.json()["jobs"]]

    assert await listed(status="failed") == [boom]
    assert await listed(status=["queued", "succeeded"]) == [waiting, echo]
    assert await listed(queue="batch") == [echo]
    assert await listed(task="boom") == [boom]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "done"}, "status"),
        ({"cursor": "abc"}, "cursor"),
        ({"limit": "0"}, "limit"),
        ({"limit": "201"}, "limit"),
    ],
)
async def test_bad_list_parameters_are_422(
    http: httpx.AsyncClient, keys: Keys, params: dict[str, str], field: str
) -> None:
    response = await http.get("/v1/jobs", params=params, headers=bearer(keys.acme))

    problem = assert_problem(response, 422, "validation-error")
    assert problem["errors"][0]["loc"][:2] == ["query", field]
