"""GET /v1/batches (admin): the open provider batches of offloaded jobs with their
counts; and an offloaded job's document names the batch it waits in."""

from __future__ import annotations

import httpx
from api_support import ADMIN_KEY, Keys, assert_problem, bearer

from backroom import App
from backroom.core.provider_batch import BatchCounts


async def test_the_open_batches_and_a_job_in_one(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    job = (await app.submit("echo", {"x": 1}, tenant="acme")).job
    (claimed,) = await app.store.claim([], 1, "w1", 30_000, app.clock.now())
    now = app.clock.now()
    assert await app.store.offload(claimed.lease, "mock/gpt", now)
    batch, _ = await app.store.batch_create("b-1", "mock", "mock/gpt", [claimed.lease], now, 1)
    await app.store.batch_submitted(batch.id, "batch_7", now)
    await app.store.batch_polled(batch.id, "in_progress", BatchCounts(1, 0, 0), now, now)

    assert_problem(await http.get("/v1/batches"), 401)
    assert_problem(await http.get("/v1/batches", headers=bearer(keys.acme)), 403)
    for key in (keys.root, ADMIN_KEY):
        response = await http.get("/v1/batches", headers=bearer(key))
        assert response.status_code == 200
        (listed,) = response.json()["batches"]
        assert (listed["id"], listed["status"], listed["lane"]) == (
            "batch_7",
            "in_progress",
            "mock/gpt",
        )
        assert listed["counts"] == {"total": 1, "succeeded": 0, "failed": 0, "pending": 1}

    document = (await http.get(f"/v1/jobs/{job.id}", headers=bearer(keys.acme))).json()
    assert document["status"] == "running"
    assert document["provider_batch"] == {
        "id": "batch_7",
        "status": "in_progress",
        "counts": {"total": 1, "succeeded": 0, "failed": 0, "pending": 1},
    }
