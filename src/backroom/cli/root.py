"""The `backroom` command's root: its own option (`--version`), and errors as one line.

`backroom.cli.main` adds every command to a root; `backroom worker` adds only its own
(see `backroom.cli.launch`). Either way the command runs through `run`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from backroom.cli.errors import CliError, errors_as_one_line
from backroom.version import __version__

__all__ = ["CliError", "new_cli", "run"]


def _print_version(wanted: bool) -> None:
    if wanted:
        print(f"backroom {__version__}")
        raise typer.Exit()


def _options(
    _version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """A durable background-job service for slow LLM work."""


def new_cli() -> typer.Typer:
    """A `backroom` command with no subcommands yet."""
    cli = typer.Typer(
        name="backroom",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    cli.callback()(_options)
    return cli


def run(cli: typer.Typer) -> None:
    """Run `cli` on this process's arguments, turning errors into one readable line."""
    with errors_as_one_line():
        # Standalone: usage errors print one line and exit 2, Ctrl-C exits 1.
        cli()
