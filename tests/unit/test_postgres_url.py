"""backroom's options in a PostgreSQL URL: taken out before asyncpg sees the URL, set by
the environment and the command line, refused with a readable error when wrong."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from backroom.config import Settings
from backroom.core.errors import ConfigError
from backroom.store.postgres.database import DEFAULT_POOL_MAX, PostgresSettings
from backroom.store.postgres.url import Pooler, UrlOptions, split_options, with_options

BOUNCER = "postgresql://app:secret@bouncer:6432/jobs"
DIRECT = "postgresql://app:secret@db:5432/jobs"


def test_backroom_options_are_taken_out_and_the_rest_of_the_query_kept() -> None:
    url = f"{BOUNCER}?pooler=transaction&sslmode=require&pool_min=0&pool_max=3"
    url += f"&listen_url={quote(DIRECT, safe='')}"

    dsn, options = split_options(url)

    assert dsn == f"{BOUNCER}?sslmode=require"
    assert options == UrlOptions(Pooler.TRANSACTION, 0, 3, DIRECT)


def test_settings_from_a_url_carry_its_options_and_default_the_rest() -> None:
    settings = PostgresSettings.from_url(f"{BOUNCER}?pooler=session&pool_max=2")
    assert (settings.dsn, settings.pooler, settings.min_connections) == (
        BOUNCER,
        Pooler.SESSION,
        1,
    )
    assert (settings.max_connections, settings.listen_dsn, settings.listens) == (2, None, True)

    plain = PostgresSettings.from_url(DIRECT)
    assert (plain.pooler, plain.max_connections) == (Pooler.NONE, DEFAULT_POOL_MAX)
    # A pool_min above the default maximum raises the maximum with it.
    assert PostgresSettings.from_url(f"{DIRECT}?pool_min=9").max_connections == 9


def test_only_a_transaction_pooler_without_a_listen_url_gives_up_listen() -> None:
    polling = PostgresSettings.from_url(f"{BOUNCER}?pooler=transaction")
    listening = PostgresSettings.from_url(
        f"{BOUNCER}?pooler=transaction&listen_url={quote(DIRECT, safe='')}"
    )
    assert (polling.listens, listening.listens, listening.listen_dsn) == (False, True, DIRECT)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("pooler=statement", "unknown pooler 'statement'"),
        ("pool_max=0", "pool_max must be 1 or more"),
        ("pool_min=-1", "pool_min must be 0 or more"),
        ("pool_min=5&pool_max=2", "pool_min 5 exceeds pool_max 2"),
        ("pool_max=many", "pool_max must be a whole number"),
        ("listen_url=redis://x", "listen_url must be a postgresql:// URL"),
    ],
)
def test_bad_options_are_refused_with_the_reason(query: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        split_options(f"{BOUNCER}?{query}")


def test_options_set_over_a_url_replace_its_own_and_leave_the_rest() -> None:
    url = f"{BOUNCER}?pooler=session&pool_max=8&sslmode=require"

    updated = with_options(url, UrlOptions(pooler=Pooler.TRANSACTION, pool_min=0))

    assert split_options(updated) == (
        f"{BOUNCER}?sslmode=require",
        UrlOptions(Pooler.TRANSACTION, 0, 8, None),
    )
    assert with_options(url, UrlOptions()) == url


def test_options_on_a_sqlite_url_are_refused() -> None:
    with pytest.raises(ConfigError, match="postgresql:// database only"):
        with_options("sqlite:///backroom.db", UrlOptions(pool_max=2))


def test_the_environment_sets_the_pooler_and_listen_url_and_the_command_line_wins() -> None:
    settings = Settings.from_env(
        {"BACKROOM_PG_POOLER": "Transaction", "BACKROOM_LISTEN_URL": DIRECT}
    )
    assert (settings.pg_pooler, settings.listen_url) == (Pooler.TRANSACTION, DIRECT)

    other = "postgresql://app@other:5432/jobs"
    url = settings.store_url(BOUNCER, listen_url=other, pool_max=3)
    assert split_options(url)[1] == UrlOptions(Pooler.TRANSACTION, None, 3, other)
    assert Settings.from_env({}).store_url("sqlite:///x.db") == "sqlite:///x.db"


def test_an_unknown_pooler_in_the_environment_is_refused() -> None:
    with pytest.raises(ConfigError, match="unknown pooler 'pgcat'"):
        Settings.from_env({"BACKROOM_PG_POOLER": "pgcat"})
