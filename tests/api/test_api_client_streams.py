"""The clients follow event streams: `wait` reads the job at its end, and a dropped
stream resumes after the last event it delivered (scripted transports, both clients)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
from test_api_client import Answer, FakeClock, Runner, document, run, scripted

from backroom import JobState

__all__ = ["run"]  # the fixture, shared with test_api_client


def stream(*events: tuple[str, str, dict[str, Any]]) -> httpx.Response:
    """An event stream's answer: each event as `event`, `id` and JSON `data` lines."""
    body = "".join(
        f"event: {kind}\nid: {event_id}\ndata: {json.dumps(data)}\n\n"
        for kind, event_id, data in events
    )
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=body)


class BrokenStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body that sends `first` and then breaks, as a dropped connection does."""

    def __init__(self, first: bytes) -> None:
        self._first = first

    def __iter__(self) -> Iterator[bytes]:
        yield self._first
        raise httpx.ReadError("connection reset")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._first
        raise httpx.ReadError("connection reset")


def test_wait_follows_the_job_stream_and_reads_the_job_at_its_end(run: Runner) -> None:
    seen: list[httpx.Request] = []
    answers: list[Answer] = [
        stream(
            ("job.submitted", "0-1", {"job_id": 7}),
            ("job.started", "0-2", {"job_id": 7}),
            ("job.succeeded", "0-3", {"job_id": 7}),
        ),
        httpx.Response(200, json=document(status="succeeded")),
    ]

    job = run(scripted(answers, seen), FakeClock(), lambda c: c.wait(7))

    assert job.done
    assert [request.url.path for request in seen] == ["/v1/jobs/7/events", "/v1/jobs/7"]


def test_a_dropped_stream_resumes_after_the_last_event(run: Runner) -> None:
    seen: list[httpx.Request] = []
    first = b'event: job.started\nid: 0-2\ndata: {"job_id": 7}\n\n'
    answers: list[Answer] = [
        httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=BrokenStream(first)
        ),
        stream(("job.failed", "0-3", {"job_id": 7})),
        httpx.Response(200, json=document(status="failed")),
    ]

    job = run(scripted(answers, seen), FakeClock(), lambda c: c.wait(7))

    assert job.status is JobState.FAILED
    assert "last-event-id" not in seen[0].headers
    assert seen[1].headers["last-event-id"] == "0-2"


def test_a_client_told_it_fell_behind_resumes_after_its_last_event(run: Runner) -> None:
    seen: list[httpx.Request] = []
    lagged = {"type": "stream.lagged", "detail": "reconnect with Last-Event-ID"}
    answers: list[Answer] = [
        stream(("job.started", "0-2", {"job_id": 7}), ("error", "", lagged)),
        stream(("job.succeeded", "0-5", {"job_id": 7})),
        httpx.Response(200, json=document(status="succeeded")),
    ]

    job = run(scripted(answers, seen), FakeClock(), lambda c: c.wait(7))

    assert job.done
    assert seen[1].headers["last-event-id"] == "0-2"
