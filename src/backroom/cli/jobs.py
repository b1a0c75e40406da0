"""The job commands: submit, status, jobs, dead-letters, redrive, cancel.

Each works on the local database (`--db`) or, with `--url`, on a server.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from backroom.cli.console import out, print_json
from backroom.cli.options import ApiKeyOption, DbOption, LimitOption, TenantOption, UrlOption
from backroom.cli.progress import follow
from backroom.cli.root import CliError
from backroom.cli.targets import Document, JobBackend, Target, open_backend
from backroom.core.job import JobState
from backroom.service.jobs import JobQuery
from backroom.service.submit import Submission

T = TypeVar("T")


def _with_backend(target: Target, action: Callable[[JobBackend], Awaitable[T]]) -> T:
    async def run() -> T:
        async with open_backend(target) as backend:
            return await action(backend)

    return asyncio.run(run())


def _error_text(document: Document) -> str:
    error = document.get("last_error")
    return "" if error is None else f"{error['type']}: {error['message']}"


def _jobs_table(documents: list[Document]) -> Table:
    table = Table("id", "task", "status", "queue", "attempts", "created", "error")
    for document in documents:
        table.add_row(
            str(document["id"]),
            document["task"],
            document["status"],
            document["queue"],
            f"{document['attempts']}/{document['max_attempts']}",
            document["created_at"] or "",
            _error_text(document),
        )
    return table


JsonOption = Annotated[
    bool, typer.Option("--json", help="Print the jobs as a JSON list (every field).")
]
WideOption = Annotated[
    bool, typer.Option("--wide", help="Print the table at full width, however wide.")
]
WebhookUrlOption = Annotated[
    str | None,
    typer.Option(
        help="POST the job's outcome here, signed with `webhooks secret`.", show_default=False
    ),
]
# Wider than any terminal: a table then takes its natural width, no column cut.
_UNLIMITED_WIDTH = 100_000


def _show_listing(documents: list[Document], as_json: bool, wide: bool) -> None:
    """Jobs as JSON, or as a table fitted to the terminal (or, `wide`, uncut)."""
    if as_json:
        print_json(documents)
        return
    # `out` never prints wider than it thinks the terminal is (80 columns in a pipe).
    console = Console(width=_UNLIMITED_WIDTH) if wide else out
    console.print(_jobs_table(documents))


def _read_input(payload: str) -> Any:
    text = sys.stdin.read() if payload == "-" else payload
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CliError(f"the input is not valid JSON: {error}") from error


def _show_outcome(document: Document) -> None:
    """Print a finished job's result, or fail with its error."""
    state = JobState(document["status"])
    if state is JobState.SUCCEEDED:
        print_json(document.get("result"))
        return
    if state is JobState.FAILED:
        raise CliError(f"job {document['id']} {document['error']}")
    raise CliError(f"job {document['id']} was cancelled")


def submit(
    task: Annotated[str, typer.Argument(help="Task name.")],
    payload: Annotated[str, typer.Argument(help="Input as JSON ('-' reads stdin).")] = "null",
    key: Annotated[str | None, typer.Option(help="Idempotency key.")] = None,
    tenant: Annotated[str | None, typer.Option(help="Tenant (local database only).")] = None,
    queue: Annotated[str | None, typer.Option(help="Queue; the task's default if omitted.")] = None,
    priority: Annotated[int, typer.Option(help="Higher runs first.")] = 0,
    max_attempts: Annotated[int | None, typer.Option(min=1, help="Attempts.")] = None,
    delay: Annotated[float, typer.Option(min=0, help="Seconds before it may run.")] = 0,
    webhook_url: WebhookUrlOption = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow the job to its end, then print its result.")
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(min=0.001, help="With --wait: give up after this many seconds."),
    ] = None,
    app_ref: Annotated[
        str | None,
        typer.Option(
            "--app",
            help="Local database: the App whose tasks it may be (the built-in ones by default).",
        ),
    ] = None,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """Submit a job and print its id (with --wait: follow it and print its result)."""
    submission = Submission(
        task,
        _read_input(payload),
        key,
        queue,
        priority,
        max_attempts,
        delay_s=delay,
        webhook_url=webhook_url,
    )

    async def action(backend: JobBackend) -> None:
        document, created = await backend.submit(submission)
        verdict = "new" if created else "duplicate, same job"
        out.print(f"job {document['id']} {document['status']} ({verdict})")
        if wait:
            _show_outcome(await follow(backend, document["id"], out, timeout))

    _with_backend(Target(db, url, api_key, tenant, app_ref, knows_tasks=True), action)


def status(
    job_id: Annotated[int, typer.Argument(help="Job id.")],
    tenant: TenantOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """Print a job with its attempt history, as JSON."""
    print_json(_with_backend(Target(db, url, api_key, tenant), lambda b: b.get(job_id)))


def jobs(
    state: Annotated[list[JobState] | None, typer.Option(help="Only these states.")] = None,
    queue: Annotated[str | None, typer.Option(help="Only this queue.")] = None,
    task: Annotated[str | None, typer.Option(help="Only this task.")] = None,
    limit: LimitOption = 50,
    as_json: JsonOption = False,
    wide: WideOption = False,
    tenant: TenantOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """List jobs, newest first."""
    query = JobQuery(tuple(state or ()), queue, task, limit=limit)
    found = _with_backend(Target(db, url, api_key, tenant), lambda b: b.jobs(query))
    _show_listing(found, as_json, wide)


def dead_letters(
    limit: LimitOption = 50,
    as_json: JsonOption = False,
    wide: WideOption = False,
    tenant: TenantOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """List jobs that failed for good, with their last error."""
    query = JobQuery((JobState.FAILED,), limit=limit)
    found = _with_backend(Target(db, url, api_key, tenant), lambda b: b.jobs(query))
    _show_listing(found, as_json, wide)


def redrive(
    job_ids: Annotated[list[int] | None, typer.Argument(help="Failed jobs to redrive.")] = None,
    all_failed: Annotated[bool, typer.Option("--all", help="Every failed job.")] = False,
    task: Annotated[str | None, typer.Option(help="Only this task's failed jobs.")] = None,
    queue: Annotated[str | None, typer.Option(help="Only this queue's failed jobs.")] = None,
    tenant: TenantOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """Send failed jobs back to the queue with a fresh attempt budget."""
    if not (job_ids or all_failed or task or queue):
        raise CliError("name job ids, or use --all, --task or --queue")
    target = Target(db, url, api_key, tenant)
    redriven = _with_backend(target, lambda b: b.redrive(job_ids or (), task, queue))
    out.print(f"redrove {len(redriven)} job(s): {' '.join(str(job_id) for job_id in redriven)}")


def cancel(
    job_id: Annotated[int, typer.Argument(help="Job id.")],
    tenant: TenantOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """Cancel a queued job, or ask the worker running it to stop."""
    document = _with_backend(Target(db, url, api_key, tenant), lambda b: b.cancel(job_id))
    verdict = "cancel requested" if document["status"] == "running" else document["status"]
    out.print(f"job {document['id']}: {verdict}")
