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

from backroom.client import queue_plans as steering
from backroom.client import webhook_plans as hooks
from backroom.client.batch_plans import BatchResults, JobRequest, submit_many
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
from backroom.client.queue_plans import Kind
from backroom.client.streams import Event, StreamUnavailable, feed_stream, follow, job_stream
from backroom.client.webhook_plans import Document, Documents
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
        webhook_url: str | None = None,
    ) -> Submitted:
        """Submit a job; with no `key`, a fresh idempotency key covers the client's retries."""
        options = {
            "queue": queue,
            "priority": priority,
            "max_attempts": max_attempts,
            "timeout_s": timeout_s,
            "delay_s": delay_s,
            "metadata": metadata,
            "webhook_url": webhook_url,
        }
        return self._run(self._plans.submit(task, input, key, options))

    def submit_many(self, jobs: Sequence[JobRequest]) -> BatchResults:
        """Submit many jobs, 1,000 a request (`POST /v1/jobs:batch`); each one's outcome, in
        order: `Submitted`, or the typed error (`QueueFull`, `InvalidRequest`, ...) of
        that job's own refusal, returned in its place rather than raised."""
        return self._run(submit_many(self._plans, jobs))

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

    def create_webhook(
        self,
        url: str,
        event_types: Sequence[str],
        *,
        tasks: Sequence[str] = (),
        queues: Sequence[str] = (),
    ) -> Document:
        """Subscribe the key's tenant to `event_types` (of `tasks`, of `queues`); the
        subscription's document, with its signing secret (shown only this once)."""
        return self._run(hooks.create_webhook(self._plans, url, event_types, tasks, queues))

    def webhooks(self) -> Documents:
        """The tenant's webhook subscriptions (every tenant's for an admin key)."""
        return self._run(hooks.webhooks(self._plans))

    def get_webhook(self, subscription_id: int) -> Document:
        """One webhook subscription."""
        return self._run(hooks.get_webhook(self._plans, subscription_id))

    def delete_webhook(self, subscription_id: int) -> None:
        """Delete a webhook subscription."""
        self._run(hooks.delete_webhook(self._plans, subscription_id))

    def rotate_webhook_secret(self, subscription_id: int) -> Document:
        """A new secret for a subscription (the old one keeps signing for a day)."""
        return self._run(hooks.rotate_webhook_secret(self._plans, subscription_id))

    def signing_secret(self, *, rotate: bool = False) -> Document:
        """The secret that signs deliveries to the tenant's jobs' own `webhook_url`;
        with `rotate`, a new one (the old one keeps signing for a day)."""
        return self._run(hooks.signing_secret(self._plans, rotate))

    def deliveries(self, job_id: int) -> Documents:
        """The webhook deliveries of a job's events, with their attempts."""
        return self._run(hooks.deliveries(self._plans, job_id))

    def redeliver(self, delivery_id: int) -> Document:
        """Send a delivery again (same body, same `webhook-id`)."""
        return self._run(hooks.redeliver(self._plans, delivery_id))

    def pause(self, kind: Kind, name: str) -> Document:
        """Pause a queue or an LLM lane for every worker (admin key); its document."""
        return self._run(steering.steer(self._plans, kind, name, "pause"))

    def resume(self, kind: Kind, name: str) -> Document:
        """Resume a paused queue or LLM lane (admin key); its document."""
        return self._run(steering.steer(self._plans, kind, name, "resume"))

    def queues(self) -> Documents:
        """Every queue with jobs or a pause: jobs by state, oldest queued age, pause."""
        return self._run(steering.queues(self._plans))

    def lanes(self) -> Documents:
        """Every LLM lane: limits, calls in flight, what is left, pauses (admin key)."""
        return self._run(steering.lanes(self._plans))

    def workers(self) -> Documents:
        """Every worker: alive, lost or stopped, with the jobs it runs (admin key)."""
        return self._run(steering.workers(self._plans))

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
