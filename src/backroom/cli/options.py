"""Options shared by the CLI's commands (they print with `backroom.cli.console`)."""

from __future__ import annotations

from typing import Annotated

import typer

from backroom.cli.logs import LOG_LEVELS

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Database URL (env BACKROOM_DATABASE_URL).", show_default=False),
]
UrlOption = Annotated[
    str | None,
    typer.Option(
        "--url", help="A backroom server to talk to (env BACKROOM_URL).", show_default=False
    ),
]
ApiKeyOption = Annotated[
    str | None,
    typer.Option(
        "--api-key", help="The server's API key (env BACKROOM_API_KEY).", show_default=False
    ),
]
TenantOption = Annotated[
    str | None, typer.Option(help="Only this tenant's jobs (local database only).")
]
LimitOption = Annotated[int, typer.Option(min=1, max=200, help="At most this many.")]
ListenUrlOption = Annotated[
    str | None,
    typer.Option(
        "--listen-url",
        help="PostgreSQL URL for the LISTEN connection, direct or session-pooled "
        "(env BACKROOM_LISTEN_URL).",
        show_default=False,
    ),
]
PoolMinOption = Annotated[
    int | None,
    typer.Option(
        "--pool-min",
        min=0,
        help="PostgreSQL connections kept open (URL pool_min).",
        show_default=False,
    ),
]
PoolMaxOption = Annotated[
    int | None,
    typer.Option(
        "--pool-max",
        min=1,
        help="PostgreSQL connections at most, 4 by default (URL pool_max).",
        show_default=False,
    ),
]
PollIntervalOption = Annotated[
    float,
    typer.Option(
        "--poll-interval",
        min=0.001,
        help="Seconds between looks for new work when no wake-up comes.",
    ),
]
WatchIntervalOption = Annotated[
    float,
    typer.Option(
        "--watch-interval",
        min=0,
        help="SQLite: seconds between checks, while idle, for other processes' commits "
        "(0: only poll).",
    ),
]
LogLevelOption = Annotated[
    str,
    typer.Option(
        "--log-level",
        help=f"Least severe log lines shown: {', '.join(LOG_LEVELS)}.",
        case_sensitive=False,
    ),
]
LogJsonOption = Annotated[
    bool, typer.Option("--log-json", help="Log one JSON object per line (for collectors).")
]
