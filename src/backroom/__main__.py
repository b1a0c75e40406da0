"""`python -m backroom` runs the CLI."""

from backroom.cli import main

main()
