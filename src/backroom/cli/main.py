"""The `backroom` command: argument parsing only; the work is done by the library.

The commands live by topic: jobs in `cli.jobs` (local database or, with `--url`, a
server), tenants in `cli.tenants`, `serve` in `cli.serve`, `migrate` and `prune` in
`cli.admin`, `mock-llm` in `cli.mock_llm`, `worker` in `cli.worker`; the demo is here.
The root (`--version`, errors as one line) is `cli.root`'s.
"""

from __future__ import annotations

from typing import Annotated

import typer

from backroom.cli import admin, jobs, mock_llm
from backroom.cli.queues import lanes, queues
from backroom.cli.root import new_cli, run
from backroom.cli.serve import serve_command
from backroom.cli.tenants import tenants
from backroom.cli.webhooks import webhooks
from backroom.cli.worker import worker
from backroom.cli.workers import workers

cli = new_cli()
cli.command("serve")(serve_command)
cli.command()(jobs.submit)
cli.command()(jobs.status)
cli.command()(jobs.jobs)
cli.command("dead-letters")(jobs.dead_letters)
cli.command()(jobs.redrive)
cli.command()(jobs.cancel)
cli.add_typer(tenants, name="tenants")
cli.add_typer(webhooks, name="webhooks")
cli.add_typer(queues, name="queues")
cli.add_typer(lanes, name="lanes")
cli.add_typer(workers, name="workers")
cli.command()(admin.migrate)
cli.command()(admin.prune)
cli.command("mock-llm")(mock_llm.mock_llm)
cli.command()(worker)


@cli.command()
def demo(
    max_attempts: Annotated[int, typer.Option(min=1, help="Attempts per job.")] = 3,
    per_tick: Annotated[int, typer.Option(min=1, help="Jobs the worker takes per tick.")] = 1,
) -> None:
    """Run the seeds' example through the real worker and store under simulated time."""
    # Imported here: the demo's SQLite store is ~30 modules that no other command loads.
    from backroom.demo.timeline import run_demo  # noqa: PLC0415

    run_demo(max_attempts=max_attempts, per_tick=per_tick, emit=print)


def main() -> None:
    """Entry point: run the CLI, turning errors into one readable line."""
    run(cli)
