"""Pausing and resuming queues and lanes over HTTP: every worker honours it (admin only)."""

from __future__ import annotations

import httpx
from api_support import ADMIN_KEY, Keys, assert_problem, bearer, submit

from backroom import App, run_until_idle

ADMIN = bearer(ADMIN_KEY)


async def _state(http: httpx.AsyncClient, job_id: int) -> str:
    response = await http.get(f"/v1/jobs/{job_id}", headers=ADMIN)
    assert response.status_code == 200, response.text
    state: str = response.json()["status"]
    return state


async def test_a_paused_queue_keeps_its_jobs_until_it_is_resumed(
    app: App, http: httpx.AsyncClient, keys: Keys
) -> None:
    paused = await http.post("/v1/queues/interactive/pause", headers=ADMIN)
    job = (await submit(http, keys.acme, payload=1)).json()
    other = (await submit(http, keys.acme, payload=2, queue="batch")).json()
    await run_until_idle(app)
    listed = (await http.get("/v1/queues", headers=ADMIN)).json()["queues"]

    assert paused.status_code == 200, paused.text
    assert paused.json()["paused"] and paused.json()["paused_at"]
    assert (await _state(http, job["id"]), await _state(http, other["id"])) == (
        "queued",
        "succeeded",
    )
    by_name = {queue["name"]: queue for queue in listed}
    assert by_name["interactive"]["paused"] and by_name["interactive"]["queued"] == 1
    assert not by_name["batch"]["paused"] and by_name["batch"]["succeeded"] == 1

    resumed = await http.post("/v1/queues/interactive/resume", headers=ADMIN)
    await run_until_idle(app)

    assert resumed.json() == {
        "kind": "queue",
        "name": "interactive",
        "paused": False,
        "paused_at": None,
        "was_paused": True,
    }
    assert await _state(http, job["id"]) == "succeeded"


async def test_a_lane_named_with_a_slash_is_paused_and_listed(http: httpx.AsyncClient) -> None:
    paused = await http.post("/v1/lanes/openai/gpt-4o-mini/pause", headers=ADMIN)
    lanes = (await http.get("/v1/lanes", headers=ADMIN)).json()["lanes"]
    resumed = await http.post("/v1/lanes/openai/gpt-4o-mini/resume", headers=ADMIN)
    again = await http.post("/v1/lanes/openai/gpt-4o-mini/resume", headers=ADMIN)

    assert paused.json()["name"] == "openai/gpt-4o-mini" and paused.json()["kind"] == "lane"
    (lane,) = lanes
    assert (lane["name"], lane["paused"], lane["in_flight"]) == ("openai/gpt-4o-mini", True, 0)
    assert lane["limits"] == {
        "max_concurrency": None,
        "requests_per_minute": None,
        "tokens_per_minute": None,
    }
    assert resumed.json()["was_paused"] and not again.json()["was_paused"]
    assert (await http.get("/v1/lanes", headers=ADMIN)).json()["lanes"] == []


async def test_only_an_admin_steers_or_lists_queues(http: httpx.AsyncClient, keys: Keys) -> None:
    tenant = bearer(keys.acme)

    assert_problem(await http.post("/v1/queues/interactive/pause", headers=tenant), 403)
    assert_problem(await http.post("/v1/lanes/openai/x/resume", headers=tenant), 403)
    assert_problem(await http.get("/v1/queues", headers=tenant), 403)
    assert_problem(await http.post("/v1/queues/interactive/pause"), 401)
    admin = await http.get("/v1/queues", headers=bearer(keys.root))
    assert admin.json() == {"queues": []}


async def test_a_name_that_is_blank_or_too_long_is_refused(http: httpx.AsyncClient) -> None:
    problem = assert_problem(
        await http.post(f"/v1/queues/{'q' * 201}/pause", headers=ADMIN), 422, "validation-error"
    )
    assert "path.name" in problem["detail"]
    assert_problem(await http.post("/v1/queues/%20/pause", headers=ADMIN), 422, "validation-error")
