"""The blocking client for a backroom server: `Client`.

    with Client("http://127.0.0.1:8000", api_key) as client:
        submitted = client.submit("demo.summarize", {"text": "..."})
        job = client.wait(submitted.job.id, timeout_s=60)

It runs the same plans as `backroom.client.async_client.AsyncClient` (see
`backroom.client.plans`), with `httpx.Client`; the transport, the clock and the
sleep between retries and polls are injectable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import TypeVar

import httpx

from backroom.client.errors import WaitTimeout
from backroom.client.plans import (
    ClientConfig,
    Finished,
    JobIds,
    JobPage,
    JobUpdate,
    Pause,
    Plan,
    Plans,
    RemoteJob,
    Submitted,
    advance,
    api_key_or_environment,
    default_headers,
    listing_params,
)
from backroom.client.streams import Event, StreamUnavailable, feed_stream, follow, job_stream
from backroom.clock import Clock, SystemClock, block
from backroom.core.job import JSON, JobState

T = TypeVar("T")


class Client:
    """The blocking client. `with Client(url, key) as client: ...`

    Same methods as `AsyncClient`, without `await`.
    """

    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        config: ClientConfig | None = None,
        clock: Clock | None = None,
        sleep: Callable[[float], None] = block,
    ) -> None:
        chosen = config or ClientConfig()
        self._plans = Plans(chosen, (clock or SystemClock()).now)
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=url,
            headers=default_headers(api_key_or_environment(api_key)),
            transport=transport,
            timeout=chosen.request_timeout_s,
        )

    def _run(self, plan: Plan[T]) -> T:
        answer: httpx.Response | None = None
        failure: httpx.TransportError | None = None
        while not isinstance(step := advance(plan, answer, failure), Finished):
            answer, failure = None, None
            if isinstance(step, Pause):
                self._sleep(step.seconds)
                continue
            try:
                answer = self._http.request(step.method, step.path, **step.arguments())
            except httpx.TransportError as error:
                failure = error
        return step.value

    def submit(
        self,
        task: str,
        input: JSON = None,
        *,
        key: str | None = None,
        queue: str | None = None,
        priority: int | None = None,
        max_attempts: int | None = None,
        timeout_s: float | None = None,
        delay_s: float | None = None,
        metadata: dict[str, JSON] | None = None,
    ) -> Submitted:
        """Submit a job; with no `key`, a fresh idempotency key covers the client's retries."""
        options = {
            "queue": queue,
            "priority": priority,
            "max_attempts": max_attempts,
            "timeout_s": timeout_s,
            "delay_s": delay_s,
            "metadata": metadata,
        }
        return self._run(self._plans.submit(task, input, key, options))

    def get(self, job_id: int) -> RemoteJob:
        """The job, with its attempt history."""
        return self._run(self._plans.get(job_id))

    def list(
        self,
        *,
        status: Sequence[JobState | str] | None = None,
        queue: str | None = None,
        task: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> JobPage:
        """One page of jobs, newest first."""
        return self._run(
            self._plans.page("/v1/jobs", listing_params(status, queue, task, cursor, limit))
        )

    def dead_letters(
        self,
        *,
        queue: str | None = None,
        task: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> JobPage:
        """One page of jobs that failed for good, newest first."""
        params = listing_params(None, queue, task, cursor, limit)
        return self._run(self._plans.page("/v1/dead-letters", params))

    def cancel(self, job_id: int) -> RemoteJob:
        """Cancel a queued job, or ask the worker running it to stop."""
        return self._run(self._plans.cancel(job_id))

    def redrive(self, job_id: int) -> RemoteJob:
        """Send a failed job back to the queue with a fresh attempt budget."""
        return self._run(self._plans.redrive(job_id))

    def redrive_all(self, *, task: str | None = None, queue: str | None = None) -> JobIds:
        """Send every failed job (of `task`, of `queue`) back to the queue; their ids."""
        return self._run(self._plans.redrive_all(task, queue))

    def wait(
        self, job_id: int, timeout_s: float | None = None, on_update: JobUpdate | None = None
    ) -> RemoteJob:
        """Follow the job's event stream until it ends (`WaitTimeout` after `timeout_s`);
        `on_update` sees the job after each event. Polls a server without streams."""
        try:
            return self._wait_streaming(job_id, timeout_s, on_update)
        except StreamUnavailable:
            return self._run(self._plans.wait(job_id, timeout_s, on_update))

    def _wait_streaming(
        self, job_id: int, timeout_s: float | None, on_update: JobUpdate | None
    ) -> RemoteJob:
        request = job_stream(job_id, None, timeout_s)
        try:
            for event in follow(self._http, request, self._sleep):
                if on_update is not None or event.terminal:
                    job = self.get(job_id)
                    if on_update is not None:
                        on_update(job)
                    if job.done:
                        return job
        except httpx.ReadTimeout:
            raise WaitTimeout(self.get(job_id)) from None
        return self.get(job_id)

    def events(
        self,
        job_id: int | None = None,
        *,
        after: str | None = None,
        tasks: Sequence[str] = (),
        queues: Sequence[str] = (),
        types: Sequence[str] = (),
    ) -> Iterator[Event]:
        """A job's events until it ends, or (no `job_id`) the caller's feed, without end;
        `after` resumes after an event's id."""
        request = (
            feed_stream(after, tasks, queues, types)
            if job_id is None
            else job_stream(job_id, after)
        )
        return follow(self._http, request, self._sleep)

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
