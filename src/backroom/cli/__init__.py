"""The `backroom` command, one module per command group."""

from backroom.cli.launch import main

__all__ = ["main"]
