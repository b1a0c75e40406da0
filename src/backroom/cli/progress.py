"""`submit --wait`: a live progress bar from the job's progress and partial output."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

from backroom.cli.targets import Document, JobBackend

_PARTIAL_CHARACTERS = 60


def _partial_text(partial: Any) -> str:
    text = partial if isinstance(partial, str) else ("" if partial is None else str(partial))
    text = " ".join(text.split())
    if len(text) <= _PARTIAL_CHARACTERS:
        return text
    return "..." + text[-_PARTIAL_CHARACTERS:]


async def follow(backend: JobBackend, job_id: int, console: Console) -> Document:
    """Poll the job until it ends, drawing its progress; the final document."""
    columns = (
        TextColumn("job {task.fields[job_id]} [bold]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[partial]}", style="dim"),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        bar = progress.add_task("queued", total=1.0, job_id=job_id, partial="")

        def show(document: Document) -> None:
            fraction = document.get("progress")
            progress.update(
                bar,
                description=document["status"],
                completed=fraction if fraction is not None else 0.0,
                partial=_partial_text(document.get("partial")),
            )

        return await backend.wait(job_id, show)
