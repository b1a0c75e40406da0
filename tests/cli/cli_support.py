"""What the CLI tests that run `backroom` as a new user would share: their project's
module and their shell's environment."""

from __future__ import annotations

import os

USER_MODULE = """
from backroom import App

app = App({url!r})

@app.task("shout")
async def shout(ctx, text):
    return text.upper()
"""
"""A user's `myjobs.py`: an App on the database `url` with one task."""


def clean_env() -> dict[str, str]:
    """The environment of a new user's shell: no backroom variables, no PYTHONPATH."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("BACKROOM_") and name != "PYTHONPATH"
    }
