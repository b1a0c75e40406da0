"""`App`: the library's front door. Register tasks, submit jobs, look them up, run workers.

app = App("sqlite:///backroom.db")

@app.task("summarize", timeout_s=60)
async def summarize(ctx, doc):
    return {"summary": doc["text"][:100]}

async with app:
    submitted = await app.submit("summarize", {"text": "..."}, key="report-42")
    await app.worker(WorkerConfig(burst=True)).run()
    job = await app.get(submitted.job.id)
"""

from __future__ import annotations

import importlib
import random
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, Unpack

from backroom.clock import Clock, SystemClock
from backroom.core.errors import ConfigError
from backroom.core.job import (
    DEFAULT_TENANT,
    JSON,
    Attempt,
    Job,
    JobEvent,
    JobState,
    NewJob,
    SubmitResult,
)
from backroom.core.job_batch import NewJobs, SubmittedJobs
from backroom.core.retry import ErrorClassifier, RetryPolicy
from backroom.runtime.worker import Worker
from backroom.runtime.worker_config import WorkerConfig
from backroom.service.cancel import request_cancel
from backroom.service.jobs import find_job
from backroom.service.redrive import redrive_failed
from backroom.store import JobFilter, RedriveFilter, Store, open_store
from backroom.tasks import Handler, LaneRequester, Task, TaskRegistry
from backroom.telemetry import Telemetry

if TYPE_CHECKING:
    from backroom.service.submit_columns import JobsOptions

H = TypeVar("H", bound=Handler)

DEFAULT_DATABASE_URL = "sqlite:///backroom.db"


class App:
    """Tasks, a store, a clock and a retry policy: everything a job needs.

    Give a database URL or an opened `Store`; `async with app` (or `await app.open()`)
    creates the schema and `close()` releases the store. `has_own_database` says whether
    either was given (the CLI then uses it unless `--db` or the environment names another).
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        store: Store | None = None,
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
        classifier: ErrorClassifier | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.database_url = database_url or DEFAULT_DATABASE_URL
        self.has_own_database = database_url is not None or store is not None
        self._store = store
        # A store handed in is the caller's: once closed with the app it cannot be
        # reopened, and quietly opening the default database instead would lose work.
        self._store_given = store is not None
        self.clock: Clock = clock or SystemClock()
        self.retry = retry or RetryPolicy()
        self.classifier = classifier or ErrorClassifier()
        self.rng = rng or random.Random()
        self.telemetry = Telemetry()
        """This process's counters, log lines and spans of its workers' attempts."""
        self.tasks = TaskRegistry()
        self._closers: list[Callable[[], Awaitable[None]]] = []

    # -- set-up -----------------------------------------------------------------------

    def task(
        self,
        name: str | None = None,
        *,
        timeout_s: float | None = None,
        retry: RetryPolicy | None = None,
        queue: str | None = None,
        lane_request: LaneRequester | None = None,
    ) -> Callable[[H], H]:
        """Decorator: register a handler as a task (named after the function by default);
        `lane_request` picks the LLM lane of a job from its input (see `Task`)."""

        def register(handler: H) -> H:
            task_name = name or f"{handler.__module__}.{handler.__qualname__}"
            self.tasks.add(Task(task_name, handler, timeout_s, retry, queue, lane_request))
            return handler

        return register

    @property
    def store(self) -> Store:
        """The store, opened from `database_url` on first use (and again after `close`).

        An app given its store cannot reopen it: after `close` this raises
        `ConfigError` rather than open the default database in its place.
        """
        if self._store is None:
            if self._store_given:
                raise ConfigError("the app's store was closed with the app; give it a new store")
            self._store = open_store(self.database_url)
        return self._store

    def use_database(self, url: str) -> None:
        """Point the app at another database before it is opened (the CLI's `--db`)."""
        if self._store is not None:
            raise ConfigError("the app's store is already open")
        self.database_url = url

    async def open(self) -> App:
        """Create or upgrade the schema."""
        await self.store.migrate()
        return self

    def close_with(self, closer: Callable[[], Awaitable[None]]) -> None:
        """Await `closer` whenever the app closes (a task's HTTP clients, say)."""
        self._closers.append(closer)

    async def close(self) -> None:
        """Release what the tasks hold, then the store."""
        for closer in self._closers:
            await closer()
        if self._store is not None:
            await self._store.close()
            self._store = None

    async def __aenter__(self) -> App:
        return await self.open()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- jobs -------------------------------------------------------------------------
    # Submitting imports its part of `backroom.service` when first called: a worker
    # process seldom submits, and that part was ~15 ms of its start-up's CPU.

    def new_job(
        self,
        task: str,
        input: JSON,
        *,
        key: str | None = None,
        tenant: str = DEFAULT_TENANT,
        queue: str | None = None,
        priority: int = 0,
        max_attempts: int | None = None,
        timeout_s: float | None = None,
        delay_s: float = 0,
        metadata: dict[str, JSON] | None = None,
        max_active: int | None = None,
    ) -> NewJob:
        """Validate a submission and build the `NewJob` the store takes (for `submit_many`);
        `max_active` caps the tenant's queued and running jobs (`QueueFull` beyond it)."""
        from backroom.service.submit import Submission, build_job  # noqa: PLC0415

        submission = Submission(
            task, input, key, queue, priority, max_attempts, timeout_s, delay_s, metadata or {}
        )
        return build_job(self, submission, tenant=tenant, max_active=max_active)

    def new_jobs(
        self, task: str, inputs: Sequence[JSON], **options: Unpack[JobsOptions]
    ) -> NewJobs:
        """`new_job` for each of `inputs` (`keys=[...]`: the n-th one's key; `tenant`,
        `queue`, `priority`, `max_attempts`, `timeout_s`, `delay_s`, `metadata` and
        `max_active` shared), for `submit_many`: checked as `new_job` checks them, held
        as columns."""
        from backroom.service.submit_columns import new_jobs  # noqa: PLC0415

        return new_jobs(self, task, inputs, **options)

    async def submit(
        self,
        task: str,
        input: JSON,
        *,
        key: str | None = None,
        tenant: str = DEFAULT_TENANT,
        queue: str | None = None,
        priority: int = 0,
        max_attempts: int | None = None,
        timeout_s: float | None = None,
        delay_s: float = 0,
        metadata: dict[str, JSON] | None = None,
        max_active: int | None = None,
        webhook_url: str | None = None,
    ) -> SubmitResult:
        """Submit a job; with a `key`, a repeat returns the first job (`created=False`).

        `queue` defaults to the task's; `delay_s` holds the first attempt back;
        `max_active` caps the tenant's queued and running jobs. Raises
        `IdempotencyConflict` when the key was used with a different submission, and
        `QueueFull` when the tenant is at `max_active`. A `webhook_url` gets the job's end,
        signed; it must be on a public address (`WebhookTargetRefused` otherwise).
        """
        from backroom.service.submit import Submission, enqueue  # noqa: PLC0415

        submission = Submission(
            task,
            input,
            key,
            queue,
            priority,
            max_attempts,
            timeout_s,
            delay_s,
            metadata or {},
            webhook_url,
        )
        return await enqueue(self, submission, tenant=tenant, max_active=max_active)

    async def submit_many(self, jobs: Sequence[NewJob]) -> SubmittedJobs:
        """Submit prepared jobs (see `new_job`, `new_jobs`) in one transaction: each
        one's id and whether it was created (`ids`, `created`), its `SubmitResult` (with
        the whole `Job`) built when read (`results[n]`)."""
        return await self.store.submit_many(jobs, self.clock.now())

    async def get(self, job_id: int, tenant: str | None = None) -> Job:
        """The job, or `JobNotFound` (also for another tenant's job)."""
        return await find_job(self, job_id, tenant)

    async def list_jobs(self, where: JobFilter | None = None) -> list[Job]:
        """Jobs newest first (see `JobFilter`)."""
        return await self.store.list_jobs(where or JobFilter())

    async def attempts(self, job_id: int) -> list[Attempt]:
        """The job's attempts, oldest first."""
        return await self.store.attempts(job_id)

    async def events(self, job_id: int) -> list[JobEvent]:
        """The job's stored transitions, oldest first."""
        return await self.store.events(job_id)

    async def cancel(self, job_id: int, tenant: str | None = None) -> Job:
        """Cancel a queued job at once, or ask the worker running it to stop."""
        return await request_cancel(self, job_id, tenant)

    async def dead_letters(self, tenant: str | None = None, limit: int = 50) -> list[Job]:
        """Jobs that failed for good, newest first."""
        return await self.list_jobs(JobFilter(tenant, states=(JobState.FAILED,), limit=limit))

    async def redrive(self, where: RedriveFilter | None = None) -> list[Job]:
        """Send failed jobs back to the queue with a fresh attempt budget."""
        return await redrive_failed(self, where or RedriveFilter())

    # -- workers ----------------------------------------------------------------------

    def worker(self, config: WorkerConfig | None = None) -> Worker:
        """A worker that runs this app's tasks from its store with its clock and policy."""
        return Worker(
            self.store,
            self.tasks,
            clock=self.clock,
            config=config,
            retry=self.retry,
            classifier=self.classifier,
            rng=self.rng,
            telemetry=self.telemetry,
        )


def load_app(reference: str) -> App:
    """The `App` named by `module:attribute` (the CLI's `--app`).

    The current folder is on the import path first, as uvicorn and celery do, so
    `--app jobs:app` finds `./jobs.py` without `PYTHONPATH=.`.
    """
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"--app takes module:attribute, not {reference!r}")
    here = str(Path.cwd())
    if "" not in sys.path and here not in sys.path:
        sys.path.insert(0, here)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError(f"cannot import {module_name!r}: {error}") from error
    found = getattr(module, attribute, None)
    if not isinstance(found, App):
        raise ConfigError(f"{reference!r} is not a backroom App")
    return found
