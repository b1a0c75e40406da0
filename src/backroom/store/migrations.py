"""Numbered schema migrations, one folder of SQL files per dialect.

A migration is `migrations/<dialect>/NNN_name.sql`; versions start at 1 and go up by
one. A backend applies the ones its `schema_version` table does not list yet, in
order, under its own write lock (SQLite: `BEGIN IMMEDIATE`), recording each, so
running `migrate` twice or from many processes at once changes nothing the second time.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from importlib import resources

from backroom.core.errors import ConfigError

SCHEMA_VERSION_DDL = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL)"
)
"""The table that lists applied migrations (the same SQL works in every dialect)."""

_FILE_NAME = re.compile(r"(?P<version>\d{3})_(?P<name>\w+)\.sql")


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered SQL script."""

    version: int
    name: str
    sql: str


def load_migrations(dialect: str) -> list[Migration]:
    """Every migration shipped for `dialect` ("sqlite", "postgres"), oldest first."""
    folder = resources.files("backroom.store") / "migrations" / dialect
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _FILE_NAME.fullmatch(entry.name)
        if match is not None:
            version = int(match["version"])
            found.append(Migration(version, match["name"], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda migration: migration.version)
    if [migration.version for migration in found] != list(range(1, len(found) + 1)):
        raise ConfigError(f"{dialect} migrations must be numbered 001, 002, ... without gaps")
    return found


def pending_migrations(dialect: str, applied: Collection[int]) -> list[Migration]:
    """The migrations for `dialect` whose versions are not in `applied`, oldest first."""
    return [migration for migration in load_migrations(dialect) if migration.version not in applied]
