"""Settings: the only place the environment is read."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

from backroom.app import DEFAULT_DATABASE_URL
from backroom.store.postgres.url import Pooler, UrlOptions, parse_pooler, with_options

# `scheme://user:PASSWORD@` and a `?password=` query parameter (asyncpg takes both).
_USER_PASSWORD = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:/@?#]*:)[^/?#]*@")


@dataclass(frozen=True, slots=True)
class Settings:
    """Process-wide configuration, from `BACKROOM_*` environment variables.

    database_url  BACKROOM_DATABASE_URL   where jobs live (default sqlite:///backroom.db;
                                          `database_url_is_set` says whether it was given)
    url           BACKROOM_URL            a backroom server, for the CLI's client mode
    api_key       BACKROOM_API_KEY        the key the CLI sends to that server
    admin_key     BACKROOM_ADMIN_KEY      a key that acts on every tenant's jobs
    config_path   BACKROOM_CONFIG         a TOML file of LLM providers (`--config`)
    pg_pooler     BACKROOM_PG_POOLER      session | transaction: a pooler in front of PostgreSQL
    listen_url    BACKROOM_LISTEN_URL     where PostgreSQL's LISTEN connection goes (`--listen-url`)
    webhook_allow BACKROOM_WEBHOOK_ALLOW  addresses or networks webhooks may reach
                                          although not public (development, tests)
    public_url    BACKROOM_PUBLIC_URL     the server's URL as receivers reach it (for the
                                          `status_url` of webhook payloads)
    dashboard_secret BACKROOM_DASHBOARD_SECRET  signs dashboard sessions (default: a
                                          random secret made once and kept in the store)
    metrics_token BACKROOM_METRICS_TOKEN  a token `GET /metrics` asks for (as a Bearer
                                          token); unset, the metrics are open
    """

    database_url: str = DEFAULT_DATABASE_URL
    database_url_is_set: bool = False
    url: str | None = None
    api_key: str | None = None
    admin_key: str | None = None
    config_path: str | None = None
    pg_pooler: Pooler | None = None
    listen_url: str | None = None
    webhook_allow: str | None = None
    public_url: str | None = None
    dashboard_secret: str | None = None
    metrics_token: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read the settings from `env` (the process environment by default)."""
        source = os.environ if env is None else env
        return cls(
            database_url=source.get("BACKROOM_DATABASE_URL") or DEFAULT_DATABASE_URL,
            database_url_is_set=bool(source.get("BACKROOM_DATABASE_URL")),
            url=source.get("BACKROOM_URL") or None,
            api_key=source.get("BACKROOM_API_KEY") or None,
            admin_key=source.get("BACKROOM_ADMIN_KEY") or None,
            config_path=source.get("BACKROOM_CONFIG") or None,
            webhook_allow=source.get("BACKROOM_WEBHOOK_ALLOW") or None,
            public_url=source.get("BACKROOM_PUBLIC_URL") or None,
            dashboard_secret=source.get("BACKROOM_DASHBOARD_SECRET") or None,
            metrics_token=source.get("BACKROOM_METRICS_TOKEN") or None,
            pg_pooler=parse_pooler(pooler)
            if (pooler := source.get("BACKROOM_PG_POOLER"))
            else None,
            listen_url=source.get("BACKROOM_LISTEN_URL") or None,
        )

    def store_url(
        self,
        url: str,
        *,
        listen_url: str | None = None,
        pool_min: int | None = None,
        pool_max: int | None = None,
    ) -> str:
        """`url` with the options these settings and the command line set (over the URL's).

        The environment's pooler and listen URL, then the given listen URL and pool
        sizes, replace what the URL itself says; a URL is left alone when none is set.
        """
        return with_options(
            url,
            UrlOptions(
                pooler=self.pg_pooler,
                listen_url=listen_url or self.listen_url,
                pool_min=pool_min,
                pool_max=pool_max,
            ),
        )


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """What one HTTP client may make `backroom serve` hold (`api/connection_guard.py`).

    max_head_bytes    request line and headers together; more is a 431
    max_headers       headers in one request; more is a 431
    max_url_bytes     the request target; longer is a 414
    header_timeout_s  time for a request's head to arrive in full; later is a 408
    idle_timeout_s    an idle keep-alive connection is closed after this
    max_connections   connections open at once; a request on one more is a 503
    """

    max_head_bytes: int = 32 * 1024
    max_headers: int = 100
    max_url_bytes: int = 8 * 1024
    header_timeout_s: float = 10.0
    idle_timeout_s: int = 5
    max_connections: int = 1000


def environment() -> Mapping[str, str]:
    """The process environment, for settings that name their own variables.

    An LLM provider's config says which variable holds its key (`api_key_env`), so the
    provider loader needs the whole mapping; it is handed over from here.
    """
    return os.environ


def redacted_url(url: str) -> str:
    """`url` fit for a log line: every password in it becomes ***: `user:secret@`, a
    `?password=` parameter, and those of a URL inside a parameter (`listen_url=`).

    >>> redacted_url("postgresql://app:s3cret@db:5432/jobs?password=x&sslmode=require")
    'postgresql://app:***@db:5432/jobs?password=***&sslmode=require'
    """
    address, mark, query = url.partition("?")
    hidden = _USER_PASSWORD.sub(r"\1***@", address)
    if not mark:
        return hidden
    parameters = [
        (name, _redacted_parameter(name, value))
        for name, value in parse_qsl(query, keep_blank_values=True)
    ]
    return f"{hidden}?{urlencode(parameters, safe='*:/@')}"


def _redacted_parameter(name: str, value: str) -> str:
    if "password" in name.lower():
        return "***"
    return redacted_url(value) if "://" in value else value
