"""A delivery's payload says what the job's LLM calls used, as the job document does."""

from __future__ import annotations

import json

from backroom.clock import SimClock
from backroom.core.job import NewJob
from backroom.core.outcome import Succeeded
from backroom.core.usage import AttemptUsage
from backroom.core.webhooks import NewSubscription
from backroom.store.memory.store import MemoryStore
from backroom.webhooks.dispatcher import WebhookDispatcher

T0 = 1_700_000_000_000


async def test_a_lane_jobs_delivery_carries_its_usage_and_a_plain_jobs_does_not() -> None:
    store = MemoryStore()
    await store.create_subscription(
        NewSubscription("acme", "https://hooks.example.com/in", ("job.succeeded",), "whsec_eA=="),
        T0,
    )
    dispatcher = WebhookDispatcher(store, SimClock(T0), lambda job_id: f"/v1/jobs/{job_id}")
    await dispatcher.dispatch_once()  # the dispatcher starts reading here
    for lane in ("openai/gpt-test", None):
        await store.submit(NewJob(task="t", input=None, run_at=T0, tenant="acme", lane=lane), T0)
    jobs = await store.claim([], 2, "worker-1", 30_000, T0)
    llm = next(job for job in jobs if job.lane is not None)
    await store.record_usage(
        AttemptUsage(
            llm.id, 1, "acme", "gpt-test", None, 100, 0, 50, 2_000_000, T0 + 1, lease_token=1
        )
    )
    await store.finish([(job.lease, Succeeded({"ok": True})) for job in jobs], T0 + 2)

    await dispatcher.dispatch_once()

    bodies = {
        job.id: json.loads((await store.list_deliveries(job.id, None))[0].payload)["data"]
        for job in jobs
    }
    assert bodies[llm.id]["usage"] == {
        "calls": 1,
        "input_tokens": 100,
        "cached_tokens": 0,
        "cache_write_tokens": 0,
        "output_tokens": 50,
        "cost_usd": "0.000002",
        "unpriced_calls": 0,
        "estimated_calls": 0,
    }
    plain = next(job for job in jobs if job.lane is None)
    assert "usage" not in bodies[plain.id]
    assert bodies[llm.id]["result"] == {"ok": True}
