"""Which CLI a `backroom` process builds: `backroom worker` its own command alone, any
other the whole of `backroom.cli.main`.

A worker process, often one of several started together, would otherwise import every
command's module (rich tables, the HTTP client, the other commands' services) and turn
every command's signature into options: ~70 ms of CPU before its first claim.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run the `backroom` command on this process's arguments."""
    if sys.argv[1:2] == ["worker"]:
        from backroom.cli.worker import run_worker_alone  # noqa: PLC0415

        run_worker_alone()
    else:
        from backroom.cli.main import main as run_whole  # noqa: PLC0415

        run_whole()
