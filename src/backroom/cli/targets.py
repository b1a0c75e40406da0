"""Where the CLI's job commands send their work: the local store, or a server.

Both backends answer with the API's plain-data job documents, so the commands print
the same thing either way. `open_backend` picks one: `--url` (or BACKROOM_URL)
means a server, reached with `--api-key`; otherwise the database of `--db`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from backroom.app import App
from backroom.client.async_client import AsyncClient
from backroom.config import Settings
from backroom.core.job import JSON, JobState
from backroom.service.documents import job_document
from backroom.store import JobFilter, RedriveFilter

Document = dict[str, Any]
DocumentUpdate = Callable[[Document], None]

# How `LocalBackend.wait` polls the store: the first pause, its growth and its cap (ms).
_POLL_FIRST_MS = 100
_POLL_FACTOR = 1.5
_POLL_CAP_MS = 2000


class CliError(Exception):
    """An error to show as one line, with exit status 1."""


@dataclass(frozen=True, slots=True)
class SubmitArgs:
    """A job as the `submit` command describes it."""

    task: str
    input: JSON
    key: str | None = None
    queue: str | None = None
    priority: int = 0
    max_attempts: int | None = None
    delay_s: float = 0


@dataclass(frozen=True, slots=True)
class Listing:
    """Which jobs a listing command wants."""

    states: Sequence[JobState] = ()
    queue: str | None = None
    task: str | None = None
    limit: int = 50


class JobBackend(Protocol):
    """The job operations the CLI needs, answered as job documents."""

    async def submit(self, args: SubmitArgs) -> tuple[Document, bool]:
        """Submit; the job's document and whether this call created it."""

    async def get(self, job_id: int) -> Document:
        """The job's document, with its attempt history."""

    async def jobs(self, listing: Listing) -> list[Document]:
        """Jobs, newest first."""

    async def cancel(self, job_id: int) -> Document:
        """Cancel the job; its document afterwards."""

    async def redrive(
        self, job_ids: Sequence[int], task: str | None, queue: str | None
    ) -> list[int]:
        """Redrive the named failed jobs, or all of `task`/`queue`; the ids redriven."""

    async def wait(self, job_id: int, on_update: DocumentUpdate) -> Document:
        """Poll the job until it ends, calling `on_update` with every state seen."""


class LocalBackend:
    """Jobs in the database, through the library (`tenant=None`: every tenant)."""

    def __init__(self, app: App, tenant: str | None) -> None:
        self._app = app
        self._tenant = tenant

    async def submit(self, args: SubmitArgs) -> tuple[Document, bool]:
        """Submit through `App.submit` (as `--tenant`, or the default tenant)."""
        options: dict[str, Any] = {} if self._tenant is None else {"tenant": self._tenant}
        result = await self._app.submit(
            args.task,
            args.input,
            key=args.key,
            queue=args.queue,
            priority=args.priority,
            max_attempts=args.max_attempts,
            delay_s=args.delay_s,
            **options,
        )
        return job_document(result.job), result.created

    async def get(self, job_id: int) -> Document:
        """The job's document, with its attempt history."""
        job = await self._app.get(job_id, self._tenant)
        return job_document(job, await self._app.attempts(job.id))

    async def jobs(self, listing: Listing) -> list[Document]:
        """Jobs, newest first."""
        where = JobFilter(
            self._tenant, tuple(listing.states), listing.queue, listing.task, limit=listing.limit
        )
        return [job_document(job) for job in await self._app.list_jobs(where)]

    async def cancel(self, job_id: int) -> Document:
        """Cancel the job; its document afterwards."""
        return job_document(await self._app.cancel(job_id, self._tenant))

    async def redrive(
        self, job_ids: Sequence[int], task: str | None, queue: str | None
    ) -> list[int]:
        """Redrive the named failed jobs, or all of `task`/`queue`; the ids redriven."""
        where = RedriveFilter(tenant=self._tenant, task=task, queue=queue, job_ids=tuple(job_ids))
        return [job.id for job in await self._app.redrive(where)]

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

    async def submit(self, args: SubmitArgs) -> tuple[Document, bool]:
        """Submit over HTTP (the client adds an idempotency key if none is given)."""
        submitted = await self._client.submit(
            args.task,
            args.input,
            key=args.key,
            queue=args.queue,
            priority=args.priority,
            max_attempts=args.max_attempts,
            delay_s=args.delay_s,
        )
        return submitted.job.document, submitted.created

    async def get(self, job_id: int) -> Document:
        """The job's document, with its attempt history."""
        return (await self._client.get(job_id)).document

    async def jobs(self, listing: Listing) -> list[Document]:
        """Jobs, newest first."""
        page = await self._client.list(
            status=listing.states or None,
            queue=listing.queue,
            task=listing.task,
            limit=listing.limit,
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
        """Poll the server until the job ends."""
        job = await self._client.wait(job_id, on_update=lambda seen: on_update(seen.document))
        return job.document


@dataclass(frozen=True, slots=True)
class Target:
    """The CLI options that choose a backend."""

    db: str | None = None
    url: str | None = None
    api_key: str | None = None
    tenant: str | None = None


@asynccontextmanager
async def open_backend(target: Target) -> AsyncIterator[JobBackend]:
    """The backend `target` names, open for the duration of the block."""
    settings = Settings.from_env()
    url = target.url or settings.url
    if url is None:
        async with App(target.db or settings.database_url) as app:
            yield LocalBackend(app, target.tenant)
        return
    api_key = target.api_key or settings.api_key
    if not url.startswith(("http://", "https://")):
        raise CliError(f"--url must be an http:// or https:// URL, not {url!r}")
    if api_key is None:
        raise CliError("--url needs an API key: --api-key or BACKROOM_API_KEY")
    if target.tenant is not None:
        raise CliError("--tenant is for the local database; on a server the API key names it")
    async with AsyncClient(url, api_key) as client:
        yield RemoteBackend(client)
