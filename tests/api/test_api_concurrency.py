"""200 clients submitting with one idempotency key at once make exactly one job."""

from __future__ import annotations

import asyncio

import httpx
from api_support import Keys, submit

from backroom import App

SUBMITTERS = 200


async def test_concurrent_submissions_with_one_key_make_one_job(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    responses = await asyncio.gather(
        *(
            submit(http, keys.acme, payload={"doc": 42}, idempotency_key="one")
            for _ in range(SUBMITTERS)
        )
    )

    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] * (SUBMITTERS - 1) + [202]
    assert len({response.json()["id"] for response in responses}) == 1
    assert len(await app.list_jobs()) == 1
