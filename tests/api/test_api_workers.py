"""`GET /v1/workers`: every worker process from its heartbeats, idle ones too (admin only)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from api_support import ADMIN_KEY, Keys, assert_problem, bearer, submit

from backroom import App, WorkerConfig
from backroom.core.workers import WorkerInfo

ADMIN = bearer(ADMIN_KEY)


async def _listed(http: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    response = await http.get("/v1/workers", headers=ADMIN)
    assert response.status_code == 200, response.text
    return {worker["id"]: worker for worker in response.json()["workers"]}


async def test_an_idle_worker_is_listed_alive_then_stopped(
    app: App, http: httpx.AsyncClient
) -> None:
    worker = app.worker(WorkerConfig(queues=("batch",), concurrency=3, worker_id="idle-1"))
    running = asyncio.create_task(worker.run())
    deadline = asyncio.get_running_loop().time() + 30
    try:
        while "idle-1" not in (listed := await _listed(http)):
            assert asyncio.get_running_loop().time() < deadline, "the worker never registered"
            await asyncio.sleep(0.01)  # it registers as it starts, on the database thread
    finally:
        worker.stop()
        await running
    after = (await _listed(http))["idle-1"]

    alive = listed["idle-1"]
    assert (alive["state"], alive["queues"], alive["concurrency"]) == ("alive", ["batch"], 3)
    assert alive["running"] == [] and alive["stopped_at"] is None
    assert alive["hostname"] and alive["pid"] and alive["heartbeat_at"]
    assert after["state"] == "stopped" and after["stopped_at"]


async def test_each_worker_shows_the_jobs_whose_lease_it_holds(
    app: App, http: httpx.AsyncClient, keys: Keys
) -> None:
    job = (await submit(http, keys.acme, payload=1)).json()
    await submit(http, keys.globex, payload=2)
    now = app.clock.now()
    await app.store.worker_beat(WorkerInfo("w-1", "host", 7, (), 2, 10_000, now), now)
    await app.store.claim([], 1, "w-1", 30_000, now)
    await app.store.claim([], 1, "before-the-registry", 30_000, now)

    listed = await _listed(http)

    assert listed["w-1"]["running"] == [
        {"id": job["id"], "task": "echo", "queue": "interactive", "tenant": "acme"}
    ]
    assert listed["w-1"]["state"] == "alive"
    old = listed["before-the-registry"]
    assert (old["state"], old["hostname"], len(old["running"])) == ("unregistered", None, 1)


async def test_only_an_admin_lists_the_workers(http: httpx.AsyncClient, keys: Keys) -> None:
    assert_problem(await http.get("/v1/workers", headers=bearer(keys.acme)), 403)
    assert_problem(await http.get("/v1/workers"), 401)
    assert (await http.get("/v1/workers", headers=bearer(keys.root))).json() == {"workers": []}
