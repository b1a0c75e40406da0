"""`backroom migrate` and `backroom prune`: looking after the database itself."""

from __future__ import annotations

import re
from typing import Annotated

import typer

from backroom.cli.console import out
from backroom.cli.local import with_app
from backroom.cli.options import DbOption
from backroom.core.job import TERMINAL_STATES, JobState
from backroom.runtime.retention import DAY_MS, MINUTE_MS
from backroom.service import maintenance
from backroom.service.documents import iso

_DURATION = re.compile(r"(?P<count>\d+)(?P<unit>[smhdw])")
_UNIT_MS = {
    "s": 1_000,
    "m": MINUTE_MS,
    "h": 60 * MINUTE_MS,
    "d": DAY_MS,
    "w": 7 * DAY_MS,
}


def duration_ms(text: str) -> int:
    """Milliseconds in a duration such as `30m`, `12h`, `7d` or `2w` (`s` for seconds)."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise typer.BadParameter(f"{text!r} is not a duration like 30m, 12h or 7d")
    return int(match["count"]) * _UNIT_MS[match["unit"]]


def final_states(text: str) -> tuple[JobState, ...]:
    """The final states in a comma-separated list such as `succeeded,cancelled`."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    allowed = sorted(str(state) for state in TERMINAL_STATES)
    unknown = [name for name in names if name not in allowed]
    if unknown or not names:
        raise typer.BadParameter(
            f"states must be some of {', '.join(allowed)}", param_hint="'--states'"
        )
    return tuple(JobState(name) for name in names)


def migrate(db: DbOption = None) -> None:
    """Create or upgrade the database schema, then print its version."""
    out.print(f"schema version {with_app(db, maintenance.schema_version)}")


def prune(
    older_than: Annotated[
        int,
        typer.Option(
            "--older-than",
            parser=duration_ms,
            metavar="DURATION",
            help="Delete jobs that finished longer ago than this: 30m, 12h, 7d, 2w.",
        ),
    ],
    states: Annotated[
        str, typer.Option(help="Final states to delete, comma-separated.")
    ] = "succeeded,cancelled,failed",
    batch: Annotated[int, typer.Option(min=1, help="Jobs deleted per transaction.")] = 1_000,
    db: DbOption = None,
) -> None:
    """Delete finished jobs older than --older-than, with their attempts and events."""
    chosen = final_states(states)
    deleted, cutoff = with_app(db, lambda app: maintenance.prune(app, older_than, chosen, batch))
    names = ", ".join(chosen)
    out.print(f"deleted {deleted} job(s) ({names}) that finished before {iso(cutoff)}")
