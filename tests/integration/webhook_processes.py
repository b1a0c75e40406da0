"""Webhooks across real processes: `backroom worker`s that deliver to a loopback receiver.

The test process sets up the tenant's subscription and submits jobs through the service
layer on the same database; the workers (the app in `webhook_worker_app`) run the jobs,
dispatch their events and send the deliveries. Every wait is a poll with a deadline.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from backroom import App
from backroom.service import webhooks as service
from backroom.service.callers import Caller
from backroom.webhooks.targets import TargetPolicy

HERE = Path(__file__).parent
TENANT = Caller("acme")
LOOPBACK = TargetPolicy.from_setting("127.0.0.1")


def start_worker(db_url: str, log: Path, *options: str) -> subprocess.Popen[bytes]:
    """A `backroom worker` allowed to deliver to 127.0.0.1, logging to `log`."""
    env = {**os.environ, "PYTHONPATH": str(HERE), "BACKROOM_WEBHOOK_ALLOW": "127.0.0.1"}
    command = [sys.executable, "-m", "backroom", "worker", "--app", "webhook_worker_app:app"]
    with log.open("wb") as stderr:
        return subprocess.Popen(
            [*command, "--db", db_url, "--poll-interval", "0.1", *options], env=env, stderr=stderr
        )


def stop(process: subprocess.Popen[bytes]) -> int:
    """SIGTERM `process` if it still runs; its exit code."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait(timeout=10)


def subscribe(db_url: str, url: str) -> str:
    """Subscribe the tenant to `job.succeeded` at `url`; the subscription's secret."""

    async def run() -> str:
        async with App(db_url) as app:
            request = service.SubscriptionRequest(url, ("job.succeeded",))
            reply = await service.create_subscription(app, TENANT, request, LOOPBACK)
        assert reply.status == 201, reply.body
        assert isinstance(reply.body, dict)
        return str(reply.body["secret"])

    return asyncio.run(run())


def submit(db_url: str, count: int, first: int = 0) -> list[int]:
    """Submit `count` echo jobs for the tenant; their ids."""

    async def run() -> list[int]:
        async with App(db_url) as app:
            return [
                (await app.submit("echo", n, tenant=TENANT.tenant)).job.id
                for n in range(first, first + count)
            ]

    return asyncio.run(run())


def deliveries(db_url: str, job_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The deliveries of each job, as the service lists them (with their attempts)."""

    async def run() -> dict[int, list[dict[str, Any]]]:
        found: dict[int, list[dict[str, Any]]] = {}
        async with App(db_url) as app:
            for job_id in job_ids:
                reply = await service.list_deliveries(app, TENANT, job_id)
                assert isinstance(reply.body, dict)
                listed = reply.body["deliveries"]
                assert isinstance(listed, list)
                found[job_id] = [dict(item) for item in listed if isinstance(item, dict)]
        return found

    return asyncio.run(run())


def all_succeeded(db_url: str, job_ids: list[int]) -> bool:
    """Whether each job has exactly one delivery, and it succeeded."""
    found = deliveries(db_url, job_ids).values()
    return all(len(items) == 1 and items[0]["state"] == "succeeded" for items in found)
