"""`submit --wait`: a live progress bar from the job's progress and partial output."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

from backroom.cli.root import CliError
from backroom.cli.targets import Document, JobBackend
from backroom.clock import SystemClock

_PARTIAL_CHARACTERS = 60
QUEUED_NOTICE_MS = 5_000
"""How long a job may stay queued under `submit --wait` before the no-worker notice."""


def _partial_text(partial: Any) -> str:
    if isinstance(partial, dict) and isinstance(partial.get("text"), str):
        partial = partial["text"]  # an LLM stream's {"attempt": N, "text": ...}
    text = partial if isinstance(partial, str) else ("" if partial is None else str(partial))
    text = " ".join(text.split())
    if len(text) <= _PARTIAL_CHARACTERS:
        return text
    return "..." + text[-_PARTIAL_CHARACTERS:]


async def follow(
    backend: JobBackend, job_id: int, console: Console, timeout_s: float | None = None
) -> Document:
    """Poll the job until it ends (or `timeout_s` passes: `CliError`), drawing its
    progress; the final document. A job still queued after a few seconds gets a line
    saying that no worker has taken it."""
    clock = SystemClock()
    started = clock.now()
    noticed = False
    columns = (
        TextColumn("job {task.fields[job_id]} [bold]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[partial]}", style="dim"),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        bar = progress.add_task("queued", total=1.0, job_id=job_id, partial="")

        def show(document: Document) -> None:
            nonlocal noticed
            waited_ms = clock.now() - started
            if document["status"] == "queued" and waited_ms >= QUEUED_NOTICE_MS and not noticed:
                noticed = True
                progress.console.print(_no_worker_notice(document, waited_ms))
            fraction = document.get("progress")
            progress.update(
                bar,
                description=document["status"],
                completed=fraction if fraction is not None else 0.0,
                partial=_partial_text(document.get("partial")),
            )

        try:
            async with asyncio.timeout(timeout_s):
                return await backend.wait(job_id, show)
        except TimeoutError:
            raise CliError(
                f"job {job_id} did not end within {timeout_s:g} s; it goes on "
                f"(`backroom status {job_id}` shows it)"
            ) from None


def _no_worker_notice(document: Document, waited_ms: int) -> str:
    return (
        f"job {document['id']} is still queued after {waited_ms // 1000} s: no worker has "
        f"taken it. Is one running with task {document['task']!r}? "
        "(`backroom worker --app module:attr`; --timeout S stops waiting)"
    )
