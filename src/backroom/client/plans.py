"""The client's operations, each written once as a plan that `Client` and
`AsyncClient` both run (see `backroom.client.blocking_client` and
`backroom.client.async_client`).

A plan is a generator: it yields `Send` (a request to make) and `Pause` (a wait) and
receives each request's response, or has the transport error thrown into it. It
never does I/O or reads the clock itself, so retries and polling live here once and
tests can drive them with any transport and any clock.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any, Generic, TypeVar

import httpx

from backroom.client.errors import ServerUnreachable, WaitTimeout, error_for, retry_after_s
from backroom.core.errors import ConfigError
from backroom.core.job import JSON, JobState

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RemoteJob:
    """A job as the server described it; `document` is the whole JSON document."""

    id: int
    task: str
    status: JobState
    attempts: int
    max_attempts: int
    result: JSON
    error: str | None
    progress: float | None
    partial: JSON
    document: dict[str, Any] = field(repr=False)

    @property
    def done(self) -> bool:
        """True once the job succeeded, failed or was cancelled."""
        return self.status.terminal

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> RemoteJob:
        """Read a job document of the API."""
        return cls(
            id=document["id"],
            task=document["task"],
            status=JobState(document["status"]),
            attempts=document["attempts"],
            max_attempts=document["max_attempts"],
            result=document.get("result"),
            error=document.get("error"),
            progress=document.get("progress"),
            partial=document.get("partial"),
            document=document,
        )


@dataclass(frozen=True, slots=True)
class Submitted:
    """What `submit` did: the job, whether this call created it, and the key it used."""

    job: RemoteJob
    created: bool
    idempotency_key: str


@dataclass(frozen=True, slots=True)
class JobPage:
    """One page of a listing, newest first; pass `next_cursor` on for the next."""

    jobs: list[RemoteJob]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Retries (connection errors and 5xx) and `wait`'s polling, in seconds."""

    retries: int = 3
    retry_base_s: float = 0.2
    retry_cap_s: float = 5.0
    poll_first_s: float = 0.1
    poll_factor: float = 1.5
    poll_cap_s: float = 2.0
    request_timeout_s: float = 30.0


@dataclass(frozen=True, slots=True)
class Send:
    """A plan step: send this request and hand back the response."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    json: JSON = None
    headers: dict[str, str] | None = None

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments of `httpx.Client.request` besides method and path."""
        return {"params": self.params, "json": self.json, "headers": self.headers}


@dataclass(frozen=True, slots=True)
class Pause:
    """A plan step: wait this long."""

    seconds: float


Step = Send | Pause
Plan = Generator[Step, httpx.Response | None, T]
"""An operation: yields steps, receives responses (None after a pause), returns T."""

JobUpdate = Callable[[RemoteJob], None]
"""Called with each state of a job that `wait` polls."""

JobIds = list[int]
"""Job ids (an alias: inside the client classes, `list` names their method)."""


class Plans:
    """The client's operations as plans, shared by `Client` and `AsyncClient`.

    `now` reads the caller's clock (epoch ms), for `wait`'s deadline.
    """

    def __init__(self, config: ClientConfig, now: Callable[[], int]) -> None:
        self.config = config
        self.now = now

    def call(self, step: Send, *, retry: bool = True) -> Plan[tuple[Any, httpx.Response]]:
        """Send `step`, retrying connection errors and 5xx; the JSON body and response.

        Retries wait `retry_base_s` doubling up to `retry_cap_s`, or the server's
        Retry-After when that is longer. Problem answers raise their typed error.
        """
        config = self.config
        retries_left = config.retries if retry else 0
        delay = config.retry_base_s
        while True:
            try:
                response = yield step
            except httpx.TransportError as error:
                if retries_left == 0:
                    raise ServerUnreachable(f"{step.method} {step.path}: {error}") from error
                response = None
            if response is not None and response.status_code < 500:
                if response.status_code >= 400:
                    raise error_for(response)
                # A 204 (a deletion) has no body to read.
                return (response.json() if response.content else None), response
            if retries_left == 0:
                assert response is not None  # only a response can get here on the last try
                raise error_for(response)
            retries_left -= 1
            server_wish = 0.0 if response is None else retry_after_s(response) or 0.0
            yield Pause(max(delay, server_wish))
            delay = min(config.retry_cap_s, delay * 2)

    def submit(
        self, task: str, input: JSON, key: str | None, options: dict[str, Any]
    ) -> Plan[Submitted]:
        """Submit a job under an idempotency key (a new one unless given).

        The same key goes with every retry, so a retry after a lost answer returns the
        job the first try made instead of making another.
        """
        chosen = key or str(uuid.uuid4())
        set_options = {name: value for name, value in options.items() if value is not None}
        body = {"task": task, "input": input, **set_options}
        step = Send("POST", "/v1/jobs", json=body, headers={"Idempotency-Key": chosen})
        document, response = yield from self.call(step)
        return Submitted(RemoteJob.from_document(document), response.status_code == 202, chosen)

    def get(self, job_id: int) -> Plan[RemoteJob]:
        """The job, with its attempt history."""
        document, _ = yield from self.call(Send("GET", f"/v1/jobs/{job_id}"))
        return RemoteJob.from_document(document)

    def page(self, path: str, params: dict[str, Any]) -> Plan[JobPage]:
        """One page of a job listing."""
        wanted = {name: value for name, value in params.items() if value is not None}
        document, _ = yield from self.call(Send("GET", path, params=wanted))
        jobs = [RemoteJob.from_document(entry) for entry in document["jobs"]]
        return JobPage(jobs, document["next_cursor"])

    def cancel(self, job_id: int) -> Plan[RemoteJob]:
        """Cancel the job (a running one is asked to stop)."""
        document, _ = yield from self.call(Send("POST", f"/v1/jobs/{job_id}/cancel"))
        return RemoteJob.from_document(document)

    def redrive(self, job_id: int) -> Plan[RemoteJob]:
        """Send one failed job back to the queue (not retried: a repeat would be a 409)."""
        step = Send("POST", f"/v1/dead-letters/{job_id}/redrive")
        document, _ = yield from self.call(step, retry=False)
        return RemoteJob.from_document(document)

    def redrive_all(self, task: str | None, queue: str | None) -> Plan[list[int]]:
        """Send every failed job (of `task`, of `queue`) back to the queue; their ids."""
        # Without a filter the server wants `all` said out loud (an empty body is a 422).
        body = {"task": task, "queue": queue} if task or queue else {"all": True}
        step = Send("POST", "/v1/dead-letters/redrive", json=body)
        document, _ = yield from self.call(step, retry=False)
        return list(document["job_ids"])

    def wait(
        self, job_id: int, timeout_s: float | None, on_update: JobUpdate | None
    ) -> Plan[RemoteJob]:
        """Poll the job, at growing intervals, until it ends or `timeout_s` passes."""
        config = self.config
        deadline = None if timeout_s is None else self.now() + timeout_s * 1000
        interval = config.poll_first_s
        while True:
            job = yield from self.get(job_id)
            if on_update is not None:
                on_update(job)
            if job.done:
                return job
            pause = interval
            if deadline is not None:
                left = (deadline - self.now()) / 1000
                if left <= 0:
                    raise WaitTimeout(job)
                pause = min(pause, left)
            yield Pause(pause)
            interval = min(config.poll_cap_s, interval * config.poll_factor)


def api_key_or_environment(api_key: str | None) -> str:
    """`api_key`, else `BACKROOM_API_KEY` (the variable `backroom serve` prints).

    Read here, not through `backroom.config`: the client stands alone (it imports only
    the core and the clock), so a program that only talks to a server stays light.
    """
    chosen = api_key or os.environ.get("BACKROOM_API_KEY") or None
    if chosen is None:
        raise ConfigError("no API key: pass api_key=..., or set BACKROOM_API_KEY")
    return chosen


def default_headers(api_key: str) -> dict[str, str]:
    """The headers every request of a client with this key carries."""
    return {
        "Authorization": f"Bearer {api_key}",
        "User-Agent": f"backroom-client/{version('backroom')}",
    }


@dataclass(frozen=True, slots=True)
class Finished(Generic[T]):
    """What `advance` returns when the plan is done: its result."""

    value: T


def advance(
    plan: Plan[T], answer: httpx.Response | None, failure: httpx.TransportError | None
) -> Step | Finished[T]:
    """Hand the plan the last step's answer (or its failure); its next step or result."""
    try:
        return plan.send(answer) if failure is None else plan.throw(failure)
    except StopIteration as finished:
        result: T = finished.value
        return Finished(result)


def listing_params(
    status: Sequence[JobState | str] | None,
    queue: str | None,
    task: str | None,
    cursor: str | None,
    limit: int | None,
) -> dict[str, Any]:
    """The query parameters of a job listing (None values are left out later)."""
    states = None if status is None else [str(state) for state in status]
    return {"status": states, "queue": queue, "task": task, "cursor": cursor, "limit": limit}
