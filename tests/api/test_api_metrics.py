"""`GET /metrics`: the store's picture from any server, each process's own counters
labelled by process, read back with prometheus-client's own parser."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from api_support import ADMIN_KEY, Keys, bearer, register_tasks, submit
from prometheus_client.parser import text_string_to_metric_families

from backroom import App, run_until_idle
from backroom.api import ApiSettings, create_api
from backroom.core.workers import WorkerInfo
from backroom.store.sqlite.store import SqliteStore
from backroom.telemetry import Telemetry

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples_of(text: str) -> Samples:
    """Every sample of an exposition, by name and sorted labels."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def labelled(samples: Samples, name: str, **labels: str) -> float:
    """The one sample of `name` whose labels include `labels`."""
    (value,) = [
        value
        for (found, pairs), value in samples.items()
        if found == name and labels.items() <= dict(pairs).items()
    ]
    return value


async def scrape(http: httpx.AsyncClient, **headers: str) -> Samples:
    response = await http.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return samples_of(response.text)


async def test_jobs_are_counted_by_queue_tenant_and_state_and_attempts_by_outcome(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    app.telemetry = Telemetry(process="host-a:1")
    await submit(http, keys.acme, task="boom")
    await submit(http, keys.globex, payload=1)
    await run_until_idle(app)
    await submit(http, keys.globex, queue="batch")
    await http.post("/v1/queues/batch/pause", headers=bearer(ADMIN_KEY))

    samples = await scrape(http)

    assert labelled(samples, "backroom_tenant_jobs", tenant="acme", state="failed") == 1
    assert labelled(samples, "backroom_tenant_jobs", tenant="globex", state="succeeded") == 1
    assert labelled(samples, "backroom_tenant_jobs", tenant="globex", queue="batch") == 1
    assert labelled(samples, "backroom_jobs", queue="interactive", state="failed") == 1
    assert labelled(samples, "backroom_queue_paused", queue="batch") == 1
    assert labelled(samples, "backroom_queue_paused", queue="interactive") == 0
    assert labelled(samples, "backroom_oldest_queued_job_age_seconds", queue="batch") >= 0
    outcomes = "backroom_attempt_outcomes_total"
    failed = labelled(samples, outcomes, task="boom", outcome="failed", error_class="Permanent")
    assert failed == 1
    assert labelled(samples, outcomes, task="echo", outcome="succeeded", process="host-a:1") == 1
    waits = labelled(samples, "backroom_queue_wait_seconds_count", task="echo")
    runs = labelled(samples, "backroom_attempt_duration_seconds_count", outcome="failed")
    assert (waits, runs) == (1, 1)


async def test_names_follow_the_prometheus_conventions(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    await submit(http, keys.acme, payload=1)
    await run_until_idle(app)
    text = (await http.get("/metrics")).text
    suffixes = {
        "counter": ("_total", "_created"),
        "histogram": ("_bucket", "_count", "_sum", "_created"),
        "gauge": ("",),
    }

    # The client's `_created` timestamps parse as gauges of their own: not ours to name.
    families = [
        family
        for family in text_string_to_metric_families(text)
        if not family.name.endswith("_created")
    ]

    assert {family.type for family in families} == set(suffixes)
    for family in families:
        assert family.name.startswith("backroom_"), family.name
        assert "seconds" not in family.name or family.name.endswith("_seconds"), family.name
        for sample in family.samples:
            assert sample.name.removeprefix(family.name) in suffixes[family.type], sample.name


async def test_a_second_process_reports_the_same_queues_and_only_its_own_counters(
    tmp_path: Path, keys: Keys, app: App
) -> None:
    """Two processes on one database: a worker that ran the job, a server that did not."""
    app.telemetry = Telemetry(process="worker:1")
    await app.submit("echo", 1, tenant="acme")
    await run_until_idle(app)
    server = App(store=SqliteStore(str(tmp_path / "api.db"), synchronous="OFF"))
    register_tasks(server)
    server.telemetry = Telemetry(process="server:2")
    async with server:
        transport = httpx.ASGITransport(create_api(server, ApiSettings(admin_key=ADMIN_KEY)))
        async with httpx.AsyncClient(transport=transport, base_url="http://b") as other:
            samples = await scrape(other)

    assert labelled(samples, "backroom_tenant_jobs", tenant="acme", state="succeeded") == 1
    assert not [key for key in samples if key[0] == "backroom_attempt_outcomes_total"]
    worker = samples_of(app.telemetry.metrics.exposition().decode())
    assert labelled(worker, "backroom_attempt_outcomes_total", process="worker:1") == 1


@pytest.mark.parametrize(
    ("headers", "status"),
    [({}, 401), ({"Authorization": "Bearer wrong"}, 401), ({"Authorization": "Bearer s3"}, 200)],
)
async def test_a_scrape_token_guards_the_metrics(
    app: App, headers: dict[str, str], status: int
) -> None:
    api = create_api(app, ApiSettings(admin_key=ADMIN_KEY, metrics_token="s3"))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(api), base_url="http://t") as http:
        response = await http.get("/metrics", headers=headers)

    assert response.status_code == status, response.text
    if status == 401:
        assert response.headers["www-authenticate"] == 'Bearer realm="metrics"'
        assert "s3" not in response.text


async def test_the_workers_are_counted_by_state_from_their_heartbeats(
    http: httpx.AsyncClient, app: App
) -> None:
    now = app.clock.now()
    for worker_id, beat_at in (("idle", now), ("busy", now), ("lost", now - 60_000)):
        await app.store.worker_beat(WorkerInfo(worker_id, "h", 1, (), 1, 10_000, 0), beat_at)
    await app.store.worker_beat(WorkerInfo("gone", "h", 2, (), 1, 10_000, 0), now)
    await app.store.worker_stopped("gone", now)

    samples = await scrape(http)

    assert labelled(samples, "backroom_workers", state="alive") == 2
    assert labelled(samples, "backroom_workers", state="lost") == 1
    assert labelled(samples, "backroom_workers", state="stopped") == 1
