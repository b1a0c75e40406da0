"""Which CLI a `backroom` process builds: `backroom worker` its own command alone, any
other the whole of `backroom.cli.main`.

A worker process, often one of several started together, would otherwise import every
command's module (rich tables, the HTTP client, the other commands' services) and turn
every command's signature into options: ~70 ms of CPU before its first claim. An
ordinary worker command line skips typer altogether (`backroom.cli.worker_args`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from backroom.cli.worker_run import WorkerOptions


def main() -> None:
    """Run the `backroom` command on this process's arguments."""
    if sys.argv[1:2] == ["worker"]:
        from backroom.cli.worker_args import quick_options  # noqa: PLC0415

        options = quick_options(sys.argv[2:])
        if options is not None:
            _run_quick(options)
            return
        from backroom.cli.worker import run_worker_alone  # noqa: PLC0415

        run_worker_alone()
    else:
        from backroom.cli.main import main as run_whole  # noqa: PLC0415

        run_whole()


def _run_quick(options: WorkerOptions) -> None:
    """Run the worker as typer would have: errors as one line, Ctrl-C as "Aborted!"."""
    from backroom.cli.errors import errors_as_one_line  # noqa: PLC0415
    from backroom.cli.worker_run import run_worker  # noqa: PLC0415

    try:
        with errors_as_one_line():
            run_worker(options)
    except (EOFError, KeyboardInterrupt):
        print("\nAborted!", file=sys.stderr)
        raise SystemExit(1) from None
