"""`python -m backroom` runs the CLI."""

from backroom.cli.main import main

main()
