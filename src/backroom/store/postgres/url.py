"""backroom's own options in a `postgresql://` URL, kept apart from what asyncpg reads.

asyncpg sends every query parameter it does not know as a server setting at start-up,
which a pooler refuses (`unsupported startup parameter`), so these are taken out of the
URL before it is used to connect:

    pooler      session | transaction   what sits between us and PostgreSQL (none by default)
    pool_min    connections kept open (>= 0)
    pool_max    connections at most (>= 1, >= pool_min)
    listen_url  a `postgresql://` URL for the LISTEN connection, URL-encoded

Parsing lives here without asyncpg, so the CLI can set options cheaply at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from backroom.core.errors import ConfigError

POSTGRES_SCHEMES = ("postgresql", "postgres")
"""The URL schemes of the PostgreSQL store."""


class Pooler(StrEnum):
    """What the store's connections go through on their way to PostgreSQL.

    NONE and SESSION behave alike (a client session is a server session). TRANSACTION
    shares a server session between clients transaction by transaction: no named
    prepared statements, no session settings, no LISTEN.
    """

    NONE = "none"
    SESSION = "session"
    TRANSACTION = "transaction"


@dataclass(frozen=True, slots=True)
class UrlOptions:
    """The options a URL carries; None where it names none."""

    pooler: Pooler | None = None
    pool_min: int | None = None
    pool_max: int | None = None
    listen_url: str | None = None

    def __post_init__(self) -> None:
        if self.pool_min is not None and self.pool_min < 0:
            raise ConfigError(f"pool_min must be 0 or more, not {self.pool_min}")
        if self.pool_max is not None and self.pool_max < 1:
            raise ConfigError(f"pool_max must be 1 or more, not {self.pool_max}")
        if (self.pool_min or 0) > (self.pool_max or self.pool_min or 0):
            raise ConfigError(f"pool_min {self.pool_min} exceeds pool_max {self.pool_max}")
        if self.listen_url is not None and not is_postgres_url(self.listen_url):
            raise ConfigError("listen_url must be a postgresql:// URL")

    def merged(self, overrides: UrlOptions) -> UrlOptions:
        """These options, with every option `overrides` names taken from it instead."""
        values = {
            field.name: getattr(overrides, field.name)
            if getattr(overrides, field.name) is not None
            else getattr(self, field.name)
            for field in fields(self)
        }
        return UrlOptions(**values)


_NAMES = frozenset(field.name for field in fields(UrlOptions))


def is_postgres_url(url: str) -> bool:
    """True for a URL of the PostgreSQL store."""
    return urlsplit(url).scheme in POSTGRES_SCHEMES


def split_options(url: str) -> tuple[str, UrlOptions]:
    """The URL without backroom's options (for asyncpg), and those options."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    ours = {name: value for name, value in query if name in _NAMES}
    theirs = [(name, value) for name, value in query if name not in _NAMES]
    dsn = urlunsplit(parts._replace(query=urlencode(theirs)))
    return dsn, UrlOptions(
        pooler=parse_pooler(ours["pooler"]) if "pooler" in ours else None,
        pool_min=_count("pool_min", ours["pool_min"]) if "pool_min" in ours else None,
        pool_max=_count("pool_max", ours["pool_max"]) if "pool_max" in ours else None,
        listen_url=ours.get("listen_url") or None,
    )


def with_options(url: str, overrides: UrlOptions) -> str:
    """`url` with every option `overrides` names set, replacing what the URL said."""
    if overrides == UrlOptions():
        return url
    if not is_postgres_url(url):
        raise ConfigError(
            "the pooler, listen URL and pool size options apply to a postgresql:// database only"
        )
    dsn, options = split_options(url)
    merged = options.merged(overrides)
    parts = urlsplit(dsn)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query += [
        (field.name, str(getattr(merged, field.name)))
        for field in fields(merged)
        if getattr(merged, field.name) is not None
    ]
    return urlunsplit(parts._replace(query=urlencode(query)))


def parse_pooler(value: str) -> Pooler:
    """The pooler a setting names (the URL's `pooler`, `BACKROOM_PG_POOLER`)."""
    try:
        return Pooler(value.strip().lower())
    except ValueError:
        names = ", ".join(pooler.value for pooler in Pooler)
        raise ConfigError(f"unknown pooler {value!r}: use one of {names}") from None


def _count(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, not {value!r}") from None
