"""The Python client: against the real app in-process, and against scripted answers
(httpx.MockTransport) for retries, polling and errors, with a fake clock."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from api_support import Keys
from fastapi import FastAPI

from backroom import App, JobState, run_until_idle
from backroom.client import (
    ApiError,
    AsyncClient,
    Client,
    IdempotencyKeyReused,
    InvalidRequest,
    NotFound,
    QueueFull,
    ServerError,
    ServerUnreachable,
    Unauthorized,
    WaitTimeout,
)


class FakeClock:
    """A clock that moves only when slept on, and remembers every pause (seconds)."""

    def __init__(self) -> None:
        self.ms = 0.0
        self.pauses: list[float] = []

    def now(self) -> int:
        return round(self.ms)

    def sleep_s(self, seconds: float) -> None:
        self.pauses.append(round(seconds, 6))
        self.ms += seconds * 1000

    async def sleep(self, ms: float) -> None:
        self.sleep_s(ms / 1000)


def document(job_id: int = 7, status: str = "queued", **fields: Any) -> dict[str, Any]:
    """A job document as the server sends it."""
    return {
        "id": job_id,
        "task": "echo",
        "status": status,
        "attempts": 0,
        "max_attempts": 3,
        "progress": None,
        "partial": None,
        **fields,
    }


Answer = httpx.Response | Exception


def scripted(answers: list[Answer], seen: list[httpx.Request]) -> httpx.MockTransport:
    """A transport that gives `answers` in order and records the requests."""
    queue: Iterator[Answer] = iter(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = next(queue)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.MockTransport(handle)


def problem(status: int, kind: str = "", **headers: str) -> httpx.Response:
    body: dict[str, Any] = {"type": f"urn:backroom:problem:{kind}" if kind else "about:blank"}
    body |= {"title": "t", "status": status, "detail": f"detail {status}"}
    return httpx.Response(status, json=body, headers=headers)


Runner = Callable[[httpx.MockTransport, FakeClock, Callable[[Any], Any]], Any]


def run_blocking(
    transport: httpx.MockTransport, clock: FakeClock, call: Callable[[Any], Any]
) -> Any:
    with Client(
        "http://backroom.test", "key", transport=transport, clock=clock, sleep=clock.sleep_s
    ) as client:
        return call(client)


def run_async(transport: httpx.MockTransport, clock: FakeClock, call: Callable[[Any], Any]) -> Any:
    async def main() -> Any:
        async with AsyncClient(
            "http://backroom.test", "key", transport=transport, clock=clock
        ) as client:
            return await call(client)

    return asyncio.run(main())


@pytest.fixture(params=[run_blocking, run_async], ids=["Client", "AsyncClient"])
def run(request: pytest.FixtureRequest) -> Runner:
    """Each scripted test runs once with each client: one implementation, two faces."""
    runner: Runner = request.param
    return runner


def test_submit_retries_with_the_same_idempotency_key(run: Runner) -> None:
    seen: list[httpx.Request] = []
    clock = FakeClock()
    answers: list[Answer] = [
        httpx.ConnectError("refused"),
        problem(503, **{"Retry-After": "3"}),
        httpx.Response(202, json=document()),
    ]

    submitted = run(scripted(answers, seen), clock, lambda c: c.submit("echo", {"a": 1}))

    keys = {request.headers["idempotency-key"] for request in seen}
    assert len(seen) == 3
    assert keys == {submitted.idempotency_key}
    assert submitted.created
    assert submitted.job.status is JobState.QUEUED
    assert clock.pauses == [0.2, 3.0]
    assert json.loads(seen[0].content) == {"task": "echo", "input": {"a": 1}}
    assert seen[0].headers["authorization"] == "Bearer key"


def test_a_replayed_submission_is_not_created(run: Runner) -> None:
    answers: list[Answer] = [httpx.Response(200, json=document())]

    submitted = run(scripted(answers, []), FakeClock(), lambda c: c.submit("echo", key="mine"))

    assert not submitted.created
    assert submitted.idempotency_key == "mine"


def test_retries_end_in_a_typed_error(run: Runner) -> None:
    down: list[Answer] = [httpx.ConnectError("refused")] * 4
    failing: list[Answer] = [problem(500)] * 4

    with pytest.raises(ServerUnreachable):
        run(scripted(down, []), FakeClock(), lambda c: c.get(1))
    with pytest.raises(ServerError) as raised:
        run(scripted(failing, []), FakeClock(), lambda c: c.get(1))
    assert raised.value.status == 500


def test_a_redrive_is_not_retried(run: Runner) -> None:
    seen: list[httpx.Request] = []

    with pytest.raises(ServerError):
        run(scripted([problem(502)], seen), FakeClock(), lambda c: c.redrive(3))
    assert len(seen) == 1


@pytest.mark.parametrize(
    ("status", "kind", "error"),
    [
        (401, "", Unauthorized),
        (404, "", NotFound),
        (422, "validation-error", InvalidRequest),
        (422, "idempotency-conflict", IdempotencyKeyReused),
    ],
)
def test_problems_become_typed_errors(
    run: Runner, status: int, kind: str, error: type[ApiError]
) -> None:
    with pytest.raises(error) as raised:
        run(scripted([problem(status, kind)], []), FakeClock(), lambda c: c.get(1))
    assert raised.value.problem["detail"] == f"detail {status}"


def test_an_answer_that_is_not_a_problem_keeps_its_text(run: Runner) -> None:
    answers: list[Answer] = [httpx.Response(418, text="<html>teapot</html>")]

    with pytest.raises(ApiError) as raised:
        run(scripted(answers, []), FakeClock(), lambda c: c.get(1))
    assert raised.value.status == 418
    assert "teapot" in raised.value.detail


def test_queue_full_carries_retry_after(run: Runner) -> None:
    answers: list[Answer] = [problem(429, "queue-full", **{"Retry-After": "5"})]

    with pytest.raises(QueueFull) as raised:
        run(scripted(answers, []), FakeClock(), lambda c: c.submit("echo"))
    assert raised.value.retry_after_s == 5
    assert raised.value.problem["detail"] == "detail 429"


def no_streams() -> httpx.Response:
    """What a server without event streams answers `GET /v1/jobs/{id}/events`."""
    return httpx.Response(404, json={"detail": "Not Found"})


def test_wait_polls_at_growing_intervals_until_the_job_ends(run: Runner) -> None:
    clock = FakeClock()
    states = ["queued", "queued", "running", "running", "succeeded"]
    answers: list[Answer] = [no_streams()]
    answers += [httpx.Response(200, json=document(status=s)) for s in states]
    updates: list[JobState] = []

    def wait(client: Any) -> Any:
        return client.wait(7, on_update=lambda job: updates.append(job.status))

    job = run(scripted(answers, []), clock, wait)

    assert job.done
    assert [str(state) for state in updates] == states
    assert clock.pauses == [0.1, 0.15, 0.225, 0.3375]


def test_wait_gives_up_at_its_timeout(run: Runner) -> None:
    clock = FakeClock()
    answers: list[Answer] = [no_streams()]
    answers += [httpx.Response(200, json=document(status="running"))] * 50

    with pytest.raises(WaitTimeout) as raised:
        run(scripted(answers, []), clock, lambda c: c.wait(7, timeout_s=1))
    assert raised.value.job.status is JobState.RUNNING
    assert sum(clock.pauses) == pytest.approx(1.0, abs=0.01)


async def test_the_async_client_against_the_app(api: FastAPI, keys: Keys, app: App) -> None:
    transport = httpx.ASGITransport(api)
    async with AsyncClient("http://backroom.test", keys.acme, transport=transport) as client:
        echo = await client.submit("echo", {"n": 1}, key="k1", metadata={"who": "test"})
        replay = await client.submit("echo", {"n": 1}, key="k1", metadata={"who": "test"})
        boom = await client.submit("boom", None, queue="batch")
        await run_until_idle(app)
        done = await client.wait(echo.job.id, timeout_s=5)
        failed = await client.dead_letters()
        redriven = await client.redrive(boom.job.id)
        queued = await client.list(status=[JobState.QUEUED])
        cancelled = await client.cancel(boom.job.id)
        with pytest.raises(IdempotencyKeyReused):
            await client.submit("echo", {"n": 2}, key="k1")
        with pytest.raises(NotFound):
            await client.get(10_000)

    assert (echo.created, replay.created, replay.job.id) == (True, False, echo.job.id)
    assert done.result == {"n": 1}
    assert [job.id for job in failed.jobs] == [boom.job.id]
    assert redriven.status is JobState.QUEUED
    assert [job.id for job in queued.jobs] == [boom.job.id]
    assert cancelled.status is JobState.CANCELLED


def test_the_blocking_client_redrives_in_bulk(run: Runner) -> None:
    seen: list[httpx.Request] = []
    answers: list[Answer] = [httpx.Response(200, json={"redriven": 2, "job_ids": [4, 5]})]

    ids = run(scripted(answers, seen), FakeClock(), lambda c: c.redrive_all(task="boom"))

    assert ids == [4, 5]
    assert json.loads(seen[0].content) == {"task": "boom", "queue": None}


def test_a_bulk_redrive_without_a_filter_says_all(run: Runner) -> None:
    seen: list[httpx.Request] = []
    answers: list[Answer] = [httpx.Response(200, json={"redriven": 1, "job_ids": [4]})]

    run(scripted(answers, seen), FakeClock(), lambda c: c.redrive_all())

    assert json.loads(seen[0].content) == {"all": True}
