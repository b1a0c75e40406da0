"""`backroom migrate` and `backroom prune`: looking after the database itself."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Annotated, Protocol, TypeVar, runtime_checkable

import typer

from backroom.app import App
from backroom.cli.options import DbOption, out
from backroom.cli.targets import CliError
from backroom.config import Settings
from backroom.core.job import TERMINAL_STATES, JobState
from backroom.runtime.retention import DAY_MS, MINUTE_MS, prune_finished
from backroom.service.documents import iso

T = TypeVar("T")

_DURATION = re.compile(r"(?P<count>\d+)(?P<unit>[smhdw])")
_UNIT_MS = {
    "s": 1_000,
    "m": MINUTE_MS,
    "h": 60 * MINUTE_MS,
    "d": DAY_MS,
    "w": 7 * DAY_MS,
}


@runtime_checkable
class _VersionedStore(Protocol):
    """A store that can say which migration its schema is at (every built-in one can)."""

    async def schema_version(self) -> int:
        """The number of the newest migration applied; 0 before the first."""


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


def _with_app(db: str | None, action: Callable[[App], Awaitable[T]]) -> T:
    """Open the database (migrating it, as every command does), run `action`, close."""

    async def run() -> T:
        async with App(db or Settings.from_env().database_url) as app:
            return await action(app)

    return asyncio.run(run())


def migrate(db: DbOption = None) -> None:
    """Create or upgrade the database schema, then print its version."""

    async def action(app: App) -> int:
        store = app.store
        if not isinstance(store, _VersionedStore):
            raise CliError("this store cannot report its schema version")
        return await store.schema_version()

    out.print(f"schema version {_with_app(db, action)}")


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

    async def action(app: App) -> tuple[int, int]:
        cutoff = app.clock.now() - older_than
        return await prune_finished(app.store, cutoff, chosen, batch), cutoff

    deleted, cutoff = _with_app(db, action)
    names = ", ".join(chosen)
    out.print(f"deleted {deleted} job(s) ({names}) that finished before {iso(cutoff)}")
