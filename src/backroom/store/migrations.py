"""Numbered schema migrations, one folder of SQL files per dialect.

A migration is `migrations/<dialect>/NNN_name.sql`; versions start at 1 and go up by
one. A backend applies the ones its `schema_version` table does not list yet, in
order, under its own write lock (SQLite: `BEGIN IMMEDIATE`), recording each, so
running `migrate` twice or from many processes at once changes nothing the second time.

The folder is read as files next to this module, as a wheel or a checkout installs
them: `importlib.resources` would cost every worker process ~10 ms of imports
(tempfile, shutil, zipfile) at start-up for zipped packages it never runs from.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

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


_FOLDER = Path(__file__).with_name("migrations")


def _shipped(dialect: str) -> list[tuple[int, str, Path]]:
    """Each migration file of `dialect`: its version, its name and its path."""
    found = []
    for entry in (_FOLDER / dialect).iterdir():
        if (match := _FILE_NAME.fullmatch(entry.name)) is not None:
            found.append((int(match["version"]), match["name"], entry))
    return found


def shipped_versions(dialect: str) -> set[int]:
    """The versions shipped for `dialect`, from the file names alone: what a store
    compares with the applied ones before it reads any SQL."""
    return {version for version, _, _ in _shipped(dialect)}


def load_migrations(dialect: str) -> list[Migration]:
    """Every migration shipped for `dialect` ("sqlite", "postgres"), oldest first."""
    found = [
        Migration(version, name, path.read_text(encoding="utf-8"))
        for version, name, path in _shipped(dialect)
    ]
    found.sort(key=lambda migration: migration.version)
    if [migration.version for migration in found] != list(range(1, len(found) + 1)):
        raise ConfigError(f"{dialect} migrations must be numbered 001, 002, ... without gaps")
    return found


def pending_migrations(dialect: str, applied: Collection[int]) -> list[Migration]:
    """The migrations for `dialect` whose versions are not in `applied`, oldest first."""
    return [migration for migration in load_migrations(dialect) if migration.version not in applied]
