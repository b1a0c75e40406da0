"""The dashboard's overview lists the workers from the registry: idle, busy and lost."""

from __future__ import annotations

import re

import httpx
from api_support import Keys, submit

from backroom import App
from backroom.core.workers import WorkerInfo


async def _log_in(http: httpx.AsyncClient, key: str) -> None:
    form = await http.get("/dashboard/login")
    found = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert found is not None
    await http.post("/dashboard/login", data={"csrf": found.group(1), "api_key": key})


def _row(page: str, worker_id: str) -> str:
    found = re.search(rf'<tr data-worker="{re.escape(worker_id)}">(.*?)</tr>', page, re.S)
    assert found is not None, page
    return found.group(1)


async def test_the_overview_shows_idle_busy_and_lost_workers_but_not_stopped_ones(
    app: App, http: httpx.AsyncClient, keys: Keys
) -> None:
    job = (await submit(http, keys.acme, payload=1)).json()["id"]
    now = app.clock.now()
    for worker_id, beat_at in (("idle", now), ("busy", now), ("lost", now - 60_000)):
        info = WorkerInfo(worker_id, "host", 1, ("interactive",), 4, 10_000, beat_at)
        await app.store.worker_beat(info, beat_at)
    await app.store.worker_beat(WorkerInfo("gone", "host", 2, (), 1, 10_000, now), now)
    await app.store.worker_stopped("gone", now)
    await app.store.claim([], 1, "busy", 30_000, now)
    await _log_in(http, keys.root)

    page = (await http.get("/dashboard/overview")).text

    assert "alive" in _row(page, "idle") and "idle" in _row(page, "idle")
    assert f"#{job} echo" in _row(page, "busy") and "1 / 4" in _row(page, "busy")
    assert "lost" in _row(page, "lost")
    assert 'data-worker="gone"' not in page


async def test_a_tenant_sees_only_the_workers_running_its_jobs(
    app: App, http: httpx.AsyncClient, keys: Keys
) -> None:
    await submit(http, keys.acme, payload=1)
    now = app.clock.now()
    for worker_id in ("idle", "busy"):
        info = WorkerInfo(worker_id, "host", 1, (), 4, 10_000, now)
        await app.store.worker_beat(info, now)
    await app.store.claim([], 1, "busy", 30_000, now)
    await _log_in(http, keys.acme)

    page = (await http.get("/dashboard/overview")).text

    assert 'data-worker="busy"' in page
    assert 'data-worker="idle"' not in page
