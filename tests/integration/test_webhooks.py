"""Webhooks end to end: a real worker, the dispatcher and a real HTTP receiver on loopback.

Deliveries retry fast here (a short retry policy), so retries take milliseconds; every
wait is a poll with a deadline on what the receiver got.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks import Webhook
from webhook_receiver import Answer, Received, Receiver, receiver

from backroom import App, JobContext
from backroom.core.job import JSON
from backroom.core.retry import Jitter, RetryPolicy
from backroom.runtime.worker_config import WorkerConfig
from backroom.service import webhooks as service
from backroom.service.callers import Caller
from backroom.service.submit import Submission, SubmitPolicy, submit_job
from backroom.webhooks.runtime import WebhookSettings, install_webhooks
from backroom.webhooks.targets import TargetPolicy

LOOPBACK = TargetPolicy.from_setting("127.0.0.1")
FAST = RetryPolicy(max_attempts=4, base_ms=20, cap_ms=50, jitter=Jitter.NONE)
ACME = Caller("acme")
WAIT_S = 20.0


async def work(ctx: JobContext, payload: JSON) -> JSON:
    if payload == "fail":
        raise ValueError("no good")
    return {"echo": payload}


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    opened = App(f"sqlite:///{tmp_path / 'hooks.db'}")
    opened.task("work", retry=RetryPolicy(max_attempts=1))(work)
    async with opened:
        yield opened


@pytest.fixture
async def running(app: App) -> AsyncIterator[App]:
    """A worker and the dispatcher, sending deliveries with the fast retry policy."""
    settings = WebhookSettings(policy=LOOPBACK, retry=FAST, timeout_s=0.5, poll_ms=50)
    hooks = install_webhooks(app, settings)
    worker = app.worker(WorkerConfig(concurrency=20, poll_interval_ms=50))
    task = asyncio.create_task(hooks.alongside(worker.run()))
    try:
        yield app
    finally:
        worker.stop()
        await task


async def subscribe(app: App, url: str, *types: str) -> str:
    request = service.SubscriptionRequest(url, types or ("job.succeeded",))
    reply = await service.create_subscription(app, ACME, request, LOOPBACK)
    assert reply.status == 201, reply.body
    assert isinstance(reply.body, dict)
    secret = reply.body["secret"]
    assert isinstance(secret, str)
    return secret


async def arrived(hooks: Receiver, path: str, count: int) -> list[Received]:
    return await asyncio.to_thread(hooks.wait_for, path, count, WAIT_S)


async def test_a_receiver_that_fails_twice_gets_one_message_three_times(running: App) -> None:
    with receiver() as hooks:
        url = hooks.script("/flaky", Answer(500), Answer(503), Answer(200))
        secret = await subscribe(running, url)

        job = (await running.submit("work", "hello", tenant="acme")).job
        await arrived(hooks, "/flaky", 3)
        deliveries = await _deliveries(
            running, job.id, lambda items: items[0]["state"] == "succeeded"
        )

    requests = hooks.at("/flaky")
    ids = {request.headers["webhook-id"] for request in requests}
    assert len(ids) == 1
    for request in requests:
        body = Webhook(secret).verify(request.body, request.headers)
        assert body["type"] == "job.succeeded"
        assert body["data"]["job_id"] == job.id
        assert body["data"]["result"] == {"echo": "hello"}
        assert body["data"]["status_url"].endswith(f"/v1/jobs/{job.id}")
    assert {request.body for request in requests} == {requests[0].body}
    (delivery,) = deliveries
    assert [attempt["status"] for attempt in delivery["attempt_history"]] == [500, 503, 200]
    assert delivery["attempts"] == 3


async def test_410_disables_the_subscription(running: App) -> None:
    with receiver() as hooks:
        url = hooks.script("/gone", Answer(410))
        await subscribe(running, url)
        job = (await running.submit("work", "x", tenant="acme")).job
        await arrived(hooks, "/gone", 1)
        await _deliveries(running, job.id, lambda items: items[0]["state"] == "failed")
        listed = await service.list_subscriptions(running, ACME)

    assert isinstance(listed.body, dict)
    (subscription,) = listed.body["subscriptions"]
    assert subscription["enabled"] is False
    assert "410" in subscription["disabled_reason"]
    assert len(hooks.at("/gone")) == 1


@pytest.mark.slow
async def test_a_redirect_to_a_private_address_is_a_failure_and_is_not_followed(
    running: App,
) -> None:
    # 127.0.0.2 is loopback but not in the allow-list (127.0.0.1 only): a private address
    # with a real receiver behind it, which would see the POST if the redirect were followed.
    with receiver() as hooks, receiver("127.0.0.2") as inside:
        internal = inside.script("/internal", Answer(200))
        url = hooks.script("/moved", Answer(307, {"location": internal}))
        await subscribe(running, url)
        job = (await running.submit("work", "x", tenant="acme")).job
        deliveries = await _deliveries(running, job.id, lambda items: items[0]["state"] == "failed")

    (delivery,) = deliveries
    assert delivery["attempts"] == FAST.max_attempts
    assert "redirects are not followed" in delivery["last_error"]
    assert len(hooks.at("/moved")) == FAST.max_attempts
    assert {request.path for request in hooks.received} == {"/moved"}
    assert inside.received == []


@pytest.mark.slow
async def test_a_429_with_retry_after_is_tried_again_no_earlier_than_asked(running: App) -> None:
    with receiver() as hooks:
        url = hooks.script("/busy", Answer(429, {"retry-after": "1"}), Answer(200))
        await subscribe(running, url)
        job = (await running.submit("work", "x", tenant="acme")).job
        (delivery,) = await _deliveries(
            running, job.id, lambda items: items[0]["state"] == "succeeded"
        )

    first, second = delivery["attempt_history"]
    assert (first["status"], second["status"]) == (429, 200)
    # Without the receiver's Retry-After, the fast retry policy would wait 20 ms.
    waited = datetime.fromisoformat(second["at"]) - datetime.fromisoformat(first["at"])
    assert waited >= timedelta(seconds=1)
    assert len(hooks.at("/busy")) == 2


async def test_a_slow_receiver_times_out_and_does_not_hold_up_others(running: App) -> None:
    release = threading.Event()
    with receiver() as hooks:
        slow = hooks.script("/slow", Answer(200, hold=release))
        fast = hooks.script("/fast", Answer(200))
        await subscribe(running, slow)
        await subscribe(running, fast)
        try:
            job = (await running.submit("work", "x", tenant="acme")).job
            await arrived(hooks, "/fast", 1)
            deliveries = await _deliveries(
                running, job.id, lambda items: any(item["last_error"] for item in items)
            )
        finally:
            release.set()

    by_url = {item["url"]: item for item in deliveries}
    assert by_url[fast]["state"] == "succeeded"
    assert "no answer in 0.5 s" in by_url[slow]["last_error"]


async def test_a_job_webhook_url_gets_the_failure_signed_with_the_tenant_secret(
    app: App, running: App
) -> None:
    with receiver() as hooks:
        url = hooks.script("/mine", Answer(204))
        secret_reply = await service.signing_secret(app, ACME, rotate=False)
        assert isinstance(secret_reply.body, dict)
        submitted = await service_submit(app, url)
        (request,) = await asyncio.to_thread(hooks.wait_for, "/mine", 1, WAIT_S)

    body = Webhook(str(secret_reply.body["secret"])).verify(request.body, request.headers)
    assert body["type"] == "job.failed"
    assert body["data"]["job_id"] == submitted
    assert body["data"]["error"]["message"] == "no good"


async def service_submit(app: App, url: str) -> int:
    reply = await submit_job(
        app, ACME, Submission("work", "fail", webhook_url=url), SubmitPolicy(webhooks=LOOPBACK)
    )
    assert reply.status == 202, reply.body
    assert isinstance(reply.body, dict)
    job_id = reply.body["id"]
    assert isinstance(job_id, int)
    return job_id


Items = list[dict[str, Any]]


async def _deliveries(app: App, job_id: int, done: Callable[[Items], bool]) -> Items:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while True:
        reply = await service.list_deliveries(app, ACME, job_id)
        assert isinstance(reply.body, dict)
        items = json.loads(json.dumps(reply.body["deliveries"]))
        if items and done(items):
            return list(items)
        assert loop.time() < deadline, items
        await asyncio.sleep(0.02)
