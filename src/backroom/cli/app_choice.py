"""Which App `backroom worker` and `backroom serve` run, with which tasks, on which database.

The database is `--db`, else BACKROOM_DATABASE_URL, else the URL the App was created
with, else sqlite:///backroom.db; a log line says which it was (without its password).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from backroom.app import App, load_app
from backroom.cli.errors import CliError
from backroom.config import Settings, redacted_url

log = logging.getLogger("backroom.cli")


@dataclass(frozen=True, slots=True)
class Connection:
    """How to reach a PostgreSQL store: `--listen-url`, `--pool-min`, `--pool-max`."""

    listen_url: str | None = None
    pool_min: int | None = None
    pool_max: int | None = None


@dataclass(frozen=True, slots=True)
class AppChoice:
    """The options that pick the App: `--app`, `--builtin-tasks`, `--db`, `--config`,
    and how to connect to its database."""

    app_ref: str | None = None
    builtin_tasks: bool = False
    db: str | None = None
    llm_config: Path | None = None
    connection: Connection = Connection()


def choose_app(choice: AppChoice, *, builtin_by_default: bool) -> App:
    """The App `choice` names, its database chosen; the built-in tasks added when asked
    for (or when no `--app` is given and `builtin_by_default`)."""
    if choice.app_ref is None and not (choice.builtin_tasks or builtin_by_default):
        raise CliError("name the tasks to run: --app module:attr, or --builtin-tasks")
    app = App() if choice.app_ref is None else load_app(choice.app_ref)
    if choice.builtin_tasks or choice.app_ref is None:
        _add_builtin_tasks(app, choice.llm_config)
    settings = Settings.from_env()
    url, source = chosen_database(choice.db, settings, app)
    link = choice.connection
    url = settings.store_url(
        url, listen_url=link.listen_url, pool_min=link.pool_min, pool_max=link.pool_max
    )
    if url != app.database_url:
        app.use_database(url)
    log.info("database %s (from %s)", redacted_url(url), source)
    return app


def chosen_database(db: str | None, settings: Settings, app: App) -> tuple[str, str]:
    """The database URL to use, and where it came from."""
    if db:
        return db, "--db"
    if settings.database_url_is_set:
        return settings.database_url, "BACKROOM_DATABASE_URL"
    if app.has_own_database:
        return app.database_url, "the app"
    return app.database_url, "the default"


def _add_builtin_tasks(app: App, llm_config: Path | None) -> None:
    # Imported here: the LLM SDK would slow the start of a worker that runs none of it.
    from backroom.builtin import add_builtin_tasks, configured_llm  # noqa: PLC0415

    providers = configured_llm(llm_config)
    if not providers.providers:
        log.info(
            "no LLM provider configured (--config, BACKROOM_CONFIG or OPENAI_API_KEY): "
            "llm.respond answers from the offline simulated provider"
        )
    add_builtin_tasks(app, providers)
