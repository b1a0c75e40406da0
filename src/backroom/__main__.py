"""`python -m backroom` runs the CLI."""

from backroom.cli.launch import main

main()
