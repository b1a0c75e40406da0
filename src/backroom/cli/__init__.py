"""The `backroom` command, one module per command group."""

from backroom.cli.main import main

__all__ = ["main"]
