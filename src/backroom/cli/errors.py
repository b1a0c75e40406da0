"""How the `backroom` command ends on an error: one readable line, exit status 1.

Kept apart from `backroom.cli.root` (typer's side) so that a `backroom worker` process
started with an ordinary command line (`backroom.cli.worker_args`) never imports typer.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from backroom.core.errors import BackroomError


class CliError(Exception):
    """An error to show as one line, with exit status 1."""


@contextlib.contextmanager
def errors_as_one_line() -> Iterator[None]:
    """Turn the errors a command may meet into one line on stderr and exit status 1."""
    try:
        yield
    except (BackroomError, CliError, ValueError, OSError) as error:
        print(f"backroom: error: {error}", file=sys.stderr)
        raise SystemExit(1) from None
