"""Where the CLI's job commands send their work: the local store, or a server.

Both backends answer with the API's plain-data job documents, so the commands print
the same thing either way; the local one works through `backroom.service`, as the API
does. `open_backend` picks one: `--url` (or BACKROOM_URL) means a server, reached with
`--api-key`; otherwise the database of `--db`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Protocol

from backroom.app import App
from backroom.cli.root import CliError
from backroom.config import Settings
from backroom.core.job import DEFAULT_TENANT, JobState
from backroom.service import cancel, jobs, redrive, submit
from backroom.service.callers import Caller
from backroom.service.jobs import JobQuery
from backroom.service.replies import Reply
from backroom.service.submit import Submission, SubmitPolicy
from backroom.webhooks.targets import TargetPolicy

if TYPE_CHECKING:
    from backroom.client.async_client import AsyncClient

Document = dict[str, Any]
DocumentUpdate = Callable[[Document], None]

# How `LocalBackend.wait` polls the store: the first pause, its growth and its cap (ms).
_POLL_FIRST_MS = 100
_POLL_FACTOR = 1.5
_POLL_CAP_MS = 2000


LOCAL_ADMIN = Caller(DEFAULT_TENANT, admin=True)
"""Who the CLI acts as on a local database without `--tenant`: an admin, who sees every
tenant's jobs and submits as the default tenant."""


class JobBackend(Protocol):
    """The job operations the CLI needs, answered as job documents."""

    async def submit(self, submission: Submission) -> tuple[Document, bool]:
        """Submit; the job's document and whether this call created it."""

    async def get(self, job_id: int) -> Document:
        """The job's document, with its attempt history."""

    async def jobs(self, query: JobQuery) -> list[Document]:
        """One page of jobs, newest first."""

    async def cancel(self, job_id: int) -> Document:
        """Cancel the job; its document afterwards."""

    async def redrive(
        self, job_ids: Sequence[int], task: str | None, queue: str | None
    ) -> list[int]:
        """Redrive the named failed jobs, or all of `task`/`queue`; the ids redriven."""

    async def wait(self, job_id: int, on_update: DocumentUpdate) -> Document:
        """Poll the job until it ends, calling `on_update` with every state seen."""


def reply_body(reply: Reply) -> Document:
    """The body of a successful reply; a problem becomes a `CliError` of its detail."""
    if reply.is_problem:
        raise CliError(reply.detail)
    assert isinstance(reply.body, dict)
    return reply.body


class LocalBackend:
    """Jobs in the database, through the service's operations, as `caller`."""

    def __init__(self, app: App, caller: Caller, policy: SubmitPolicy) -> None:
        self._app = app
        self._caller = caller
        self._policy = policy

    async def submit(self, submission: Submission) -> tuple[Document, bool]:
        """Submit as the caller's tenant (any queue; a webhook_url as the environment allows)."""
        reply = await submit.submit_job(self._app, self._caller, submission, self._policy)
        return reply_body(reply), reply.status == HTTPStatus.ACCEPTED

    async def get(self, job_id: int) -> Document:
        """The job's document, with its attempt history."""
        return reply_body(await jobs.get_job(self._app, self._caller, job_id))

    async def jobs(self, query: JobQuery) -> list[Document]:
        """One page of jobs, newest first."""
        page = reply_body(await jobs.list_jobs(self._app, self._caller, query))
        return list(page["jobs"])

    async def cancel(self, job_id: int) -> Document:
        """Cancel the job; its document afterwards."""
        return reply_body(await cancel.cancel_job(self._app, self._caller, job_id))

    async def redrive(
        self, job_ids: Sequence[int], task: str | None, queue: str | None
    ) -> list[int]:
        """Redrive the named failed jobs one by one, or all of `task`/`queue` at once."""
        if not job_ids:
            bulk = reply_body(await redrive.redrive_jobs(self._app, self._caller, task, queue))
            return list(bulk["job_ids"])
        return [
            reply_body(await redrive.redrive_job(self._app, self._caller, job_id))["id"]
            for job_id in job_ids
        ]

    async def wait(self, job_id: int, on_update: DocumentUpdate) -> Document:
        """Poll the store (a worker elsewhere runs the job) until the job ends."""
        pause = _POLL_FIRST_MS
        while True:
            document = await self.get(job_id)
            on_update(document)
            if JobState(document["status"]).terminal:
                return document
            await self._app.clock.sleep(pause)
            pause = min(_POLL_CAP_MS, round(pause * _POLL_FACTOR))


class RemoteBackend:
    """Jobs on a backroom server, through `AsyncClient` (the key names the tenant)."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def submit(self, submission: Submission) -> tuple[Document, bool]:
        """Submit over HTTP (the client adds an idempotency key if none is given)."""
        submitted = await self._client.submit(
            submission.task,
            submission.input,
            key=submission.key,
            queue=submission.queue,
            priority=submission.priority,
            max_attempts=submission.max_attempts,
            timeout_s=submission.timeout_s,
            delay_s=submission.delay_s,
            metadata=submission.metadata or None,
            webhook_url=submission.webhook_url,
        )
        return submitted.job.document, submitted.created

    async def get(self, job_id: int) -> Document:
        """The job's document, with its attempt history."""
        return (await self._client.get(job_id)).document

    async def jobs(self, query: JobQuery) -> list[Document]:
        """One page of jobs, newest first."""
        page = await self._client.list(
            status=query.states or None,
            queue=query.queue,
            task=query.task,
            cursor=query.cursor,
            limit=query.limit,
        )
        return [job.document for job in page.jobs]

    async def cancel(self, job_id: int) -> Document:
        """Cancel the job; its document afterwards."""
        return (await self._client.cancel(job_id)).document

    async def redrive(
        self, job_ids: Sequence[int], task: str | None, queue: str | None
    ) -> list[int]:
        """Redrive the named failed jobs one by one, or all of `task`/`queue` at once."""
        if not job_ids:
            return await self._client.redrive_all(task=task, queue=queue)
        return [(await self._client.redrive(job_id)).id for job_id in job_ids]

    async def wait(self, job_id: int, on_update: DocumentUpdate) -> Document:
        """Follow the job's event stream (polling an older server) until it ends."""
        job = await self._client.wait(job_id, on_update=lambda seen: on_update(seen.document))
        return job.document


@dataclass(frozen=True, slots=True)
class Target:
    """The CLI options that choose a backend.

    `app_ref` names the App whose tasks a local submission must be one of (the built-in
    tasks without it); `knows_tasks` says the command needs them (only `submit` does).
    """

    db: str | None = None
    url: str | None = None
    api_key: str | None = None
    tenant: str | None = None
    app_ref: str | None = None
    knows_tasks: bool = False


def _local_app(target: Target, settings: Settings) -> App:
    """The App a local command runs on: with the tasks a submission is checked against
    when it needs them, else none (a listing needs only the database)."""
    if not target.knows_tasks:
        return App(settings.store_url(target.db or settings.database_url))
    # Imported here: app_choice reports errors as this module's CliError.
    from backroom.cli.app_choice import AppChoice, choose_app  # noqa: PLC0415

    return choose_app(AppChoice(target.app_ref, db=target.db), builtin_by_default=True)


@dataclass(frozen=True, slots=True)
class LocalSide:
    """A local database, open: its App, who acts on it, and the webhook addresses the
    environment allows (`BACKROOM_WEBHOOK_ALLOW`)."""

    app: App
    caller: Caller
    webhooks: TargetPolicy


@asynccontextmanager
async def open_backend(target: Target) -> AsyncIterator[JobBackend]:
    """The job backend `target` names, open for the duration of the block."""
    async with open_side(target) as side:
        if isinstance(side, LocalSide):
            yield LocalBackend(side.app, side.caller, SubmitPolicy(webhooks=side.webhooks))
        else:
            yield RemoteBackend(side)


@asynccontextmanager
async def open_side(target: Target) -> AsyncIterator[LocalSide | AsyncClient]:
    """The local database or the server client `target` names, open for the block."""
    settings = Settings.from_env()
    url = target.url or settings.url
    if url is None:
        policy = TargetPolicy.from_setting(settings.webhook_allow)
        async with _local_app(target, settings) as app:
            caller = LOCAL_ADMIN if target.tenant is None else Caller(target.tenant)
            yield LocalSide(app, caller, policy)
        return
    if target.app_ref is not None:
        raise CliError("--app is for the local database; a server knows its own tasks")
    api_key = target.api_key or settings.api_key
    if not url.startswith(("http://", "https://")):
        raise CliError(f"--url must be an http:// or https:// URL, not {url!r}")
    if api_key is None:
        raise CliError("--url needs an API key: --api-key or BACKROOM_API_KEY")
    if target.tenant is not None:
        raise CliError("--tenant is for the local database; on a server the API key names it")
    # Imported here: the client's httpx loads rich and click, which every other command
    # (a worker process above all) would pay for at start-up.
    from backroom.client.async_client import AsyncClient  # noqa: PLC0415

    async with AsyncClient(url, api_key) as client:
        yield client
