"""`backroom queues list|pause|resume` and `backroom lanes list|pause|resume`.

A pause stops every worker, on every machine, from starting jobs of that queue or
LLM lane until it is resumed; running jobs go on. Each command works on the local
database (`--db`, as an admin) or, with `--url`, on a server (an admin key).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated, Literal, Protocol, TypeVar

import typer
from rich.table import Table

from backroom.cli.console import out, print_json
from backroom.cli.options import ApiKeyOption, DbOption, UrlOption
from backroom.cli.targets import Document, LocalSide, Target, open_side, reply_body
from backroom.service import queues as service
from backroom.service.replies import Reply

T = TypeVar("T")
Kind = Literal["queue", "lane"]

queues = typer.Typer(help="Queues: list them, pause and resume them for every worker.")
queues.info.no_args_is_help = True
lanes = typer.Typer(help="LLM lanes: list them, pause and resume them for every worker.")
lanes.info.no_args_is_help = True

JsonOption = Annotated[bool, typer.Option("--json", help="Print the list as JSON.")]


class Steering(Protocol):
    """What the commands need: `AsyncClient` has it, `LocalSteering` makes it local."""

    async def pause(self, kind: Kind, name: str) -> Document:
        """Pause a queue or lane; its document."""

    async def resume(self, kind: Kind, name: str) -> Document:
        """Resume a queue or lane; its document."""

    async def queues(self) -> list[Document]:
        """Every queue with jobs or a pause."""

    async def lanes(self) -> list[Document]:
        """Every lane with calls or a pause."""


Steer = Callable[..., Awaitable[Reply]]
_ACTIONS: dict[tuple[str, Kind], Steer] = {
    ("pause", "queue"): service.pause_queue,
    ("resume", "queue"): service.resume_queue,
    ("pause", "lane"): service.pause_lane,
    ("resume", "lane"): service.resume_lane,
}


class LocalSteering:
    """Steering the local database through the service, as the CLI's admin caller."""

    def __init__(self, side: LocalSide) -> None:
        self._side = side

    async def pause(self, kind: Kind, name: str) -> Document:
        """Pause a queue or lane."""
        return reply_body(await _ACTIONS["pause", kind](self._side.app, self._side.caller, name))

    async def resume(self, kind: Kind, name: str) -> Document:
        """Resume a queue or lane."""
        return reply_body(await _ACTIONS["resume", kind](self._side.app, self._side.caller, name))

    async def queues(self) -> list[Document]:
        """Every queue with jobs or a pause."""
        return list(
            reply_body(await service.list_queues(self._side.app, self._side.caller))["queues"]
        )

    async def lanes(self) -> list[Document]:
        """Every lane with calls or a pause."""
        return list(
            reply_body(await service.list_lanes(self._side.app, self._side.caller))["lanes"]
        )


def _steering(target: Target, action: Callable[[Steering], Awaitable[T]]) -> T:
    async def run() -> T:
        async with open_side(target) as side:
            backend = LocalSteering(side) if isinstance(side, LocalSide) else side
            return await action(backend)

    return asyncio.run(run())


def _paused_text(document: Document) -> str:
    return "yes" if document["paused"] else "-"


def _age_text(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.1f}s"


def _show_pause(document: Document) -> None:
    kind, name = document["kind"], document["name"]
    if document["paused"]:
        out.print(f"paused {kind} {name!r} since {document['paused_at']}: no job of it starts")
    elif document.get("was_paused"):
        out.print(f"resumed {kind} {name!r}: its jobs start again")
    else:
        out.print(f"{kind} {name!r} was not paused")


NameArgument = Annotated[str, typer.Argument(help="Its name.")]


def _declare_steering(group: typer.Typer, kind: Kind) -> None:
    """The `pause` and `resume` commands of `group`, for one kind."""

    @group.command(help=f"Pause a {kind} for every worker: none of its jobs starts until resumed.")
    def pause(
        name: NameArgument, db: DbOption = None, url: UrlOption = None, api_key: ApiKeyOption = None
    ) -> None:
        _show_pause(_steering(Target(db, url, api_key), lambda backend: backend.pause(kind, name)))

    @group.command(help=f"Resume a paused {kind}: its due jobs start at once.")
    def resume(
        name: NameArgument, db: DbOption = None, url: UrlOption = None, api_key: ApiKeyOption = None
    ) -> None:
        _show_pause(_steering(Target(db, url, api_key), lambda backend: backend.resume(kind, name)))


_declare_steering(queues, "queue")
_declare_steering(lanes, "lane")


@queues.command("list")
def list_queues(
    as_json: JsonOption = False,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """List the queues: jobs by state, the oldest queued job's age, failure rate, pause."""
    found = _steering(Target(db, url, api_key), lambda backend: backend.queues())
    if as_json:
        print_json(found)
        return
    # Short headers, so that the table fits 80 columns: --json has every count (the
    # cancelled jobs too) under its full name.
    table = Table("queue", "queued", "running", "done", "failed", "oldest", "fail/h", "paused")
    table.columns[0].overflow = "fold"  # a queue's name wraps, never cut short
    for queue in found:
        table.add_row(
            queue["name"],
            *(str(queue[state]) for state in ("queued", "running", "succeeded", "failed")),
            _age_text(queue["oldest_queued_age_seconds"]),
            f"{queue['failure_rate_last_hour']:.0%}",
            _paused_text(queue),
        )
    out.print(table)


@lanes.command("list")
def list_lanes(
    as_json: JsonOption = False,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """List the LLM lanes: calls in flight, the concurrency limit, requests and tokens
    left, the pause after a provider's 429, and a person's pause."""
    found = _steering(Target(db, url, api_key), lambda backend: backend.lanes())
    if as_json:
        print_json(found)
        return
    table = Table("lane", "in flight", "max", "requests", "tokens", "429 pause", "paused")
    table.columns[0].overflow = "fold"
    for lane in found:
        table.add_row(
            lane["name"],
            str(lane["in_flight"]),
            _limit_text(lane["limits"]["max_concurrency"]),
            _limit_text(lane["requests_left"]),
            _limit_text(lane["tokens_left"]),
            lane["paused_until"] or "-",
            _paused_text(lane),
        )
    out.print(table)


def _limit_text(value: int | None) -> str:
    return "-" if value is None else str(value)
