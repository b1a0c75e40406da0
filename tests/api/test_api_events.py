"""Event streams from a real `backroom serve` process: a job's events in order, resuming
with Last-Event-ID, the tenant feed, and the clients following them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from httpx_sse import connect_sse
from server_process import Server, serve_process

from backroom.client import Client

pytestmark = pytest.mark.slow

TERMINAL = {"job.succeeded", "job.failed", "job.cancelled"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder: Path = tmp_path_factory.mktemp("events")
    database = f"sqlite:///{folder / 'events.db'}"
    with serve_process(folder, "--db", database, "--log-level", "warning") as server:
        yield server


def stream(server: Server, path: str, **headers: str) -> list[tuple[str, str, dict[str, object]]]:
    """Every event of a stream that ends by itself: (id, type, data)."""
    with (
        httpx.Client(
            base_url=server.url,
            headers={"Authorization": f"Bearer {server.key}", **headers},
            timeout=httpx.Timeout(30),
        ) as http,
        connect_sse(http, "GET", path) as source,
    ):
        assert source.response.status_code == 200
        return [(sse.id, sse.event, sse.json()) for sse in source.iter_sse()]


def test_a_job_stream_tells_the_whole_story_in_order_and_ends(server: Server) -> None:
    with Client(server.url, server.key) as client:
        job = client.submit("demo.summarize", {"text": "one two three"}).job

    events = stream(server, f"/v1/jobs/{job.id}/events")

    kinds = [kind for _, kind, _ in events]
    assert kinds[0] == "job.submitted"
    assert kinds[-1] == "job.succeeded"
    assert "job.started" in kinds
    assert "job.progress" in kinds
    assert all(data["job_id"] == job.id for _, _, data in events)
    positions = [tuple(int(part) for part in event_id.split("-")) for event_id, _, _ in events]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    progress = [data["progress"] for _, kind, data in events if kind == "job.progress"]
    assert progress == sorted(progress)  # type: ignore[type-var]


def test_last_event_id_resumes_after_that_event(server: Server) -> None:
    with Client(server.url, server.key) as client:
        job = client.submit("demo.noop", None).job
        client.wait(job.id, timeout_s=30)
    events = stream(server, f"/v1/jobs/{job.id}/events")

    resumed = stream(server, f"/v1/jobs/{job.id}/events", **{"Last-Event-ID": events[0][0]})

    assert resumed == events[1:]


def test_a_bad_last_event_id_and_another_tenants_job_are_refused(server: Server) -> None:
    headers = {"Authorization": f"Bearer {server.key}"}
    with httpx.Client(base_url=server.url, headers=headers) as http:
        bad = http.get("/v1/jobs/1/events", headers={"Last-Event-ID": "yesterday"})
        missing = http.get("/v1/jobs/999999/events")

    assert bad.status_code == 422
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"


def test_the_client_follows_the_feed_and_a_job(server: Server) -> None:
    with Client(server.url, server.key) as client:
        first = client.submit("demo.noop", {"n": 1}).job
        client.wait(first.id, timeout_s=30)
        # From the start of the feed, only successes of demo.noop: this job's is among them.
        feed = client.events(after="0-0", tasks=["demo.noop"], types=["job.succeeded"])
        seen = next(event for event in feed if event.job_id == first.id)
        updates: list[str] = []
        second = client.submit("demo.summarize", {"text": "a b c d"}).job
        done = client.wait(
            second.id, timeout_s=30, on_update=lambda job: updates.append(str(job.status))
        )
        job_events = [event.type for event in client.events(second.id)]

    assert seen.type == "job.succeeded"
    assert done.status.value == "succeeded"
    assert updates[-1] == "succeeded"
    assert job_events[-1] == "job.succeeded"
