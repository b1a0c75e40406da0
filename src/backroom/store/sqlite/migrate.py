"""Apply the SQLite migrations that the database has not seen yet."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

from backroom.store.migrations import SCHEMA_VERSION_DDL, pending_migrations

# Split after every semicolon; pieces are joined back until SQLite calls them complete.
_AFTER_SEMICOLON = re.compile(r"(?<=;)")


def _statements(script: str) -> Iterator[str]:
    """The statements of `script`, one at a time (sqlite3 executes only one per call).

    `sqlite3.complete_statement` knows about strings, comments and trigger bodies, so a
    semicolon inside one of those does not end a statement.
    """
    statement = ""
    for piece in _AFTER_SEMICOLON.split(script):
        statement += piece
        if sqlite3.complete_statement(statement):
            yield statement
            statement = ""
    if statement.strip():
        yield statement


def apply_migrations(connection: sqlite3.Connection) -> None:
    """Run every pending migration and record it; call inside a write transaction.

    `executescript` would commit the open transaction, so statements run one by one:
    a migration and its schema_version row commit together or not at all.
    """
    connection.execute(SCHEMA_VERSION_DDL)
    applied = {version for (version,) in connection.execute("SELECT version FROM schema_version")}
    for migration in pending_migrations("sqlite", applied):
        for statement in _statements(migration.sql):
            connection.execute(statement)
        connection.execute(
            "INSERT INTO schema_version (version, name) VALUES (?, ?)",
            (migration.version, migration.name),
        )


def schema_version(connection: sqlite3.Connection) -> int:
    """The number of the newest migration applied; 0 before the first."""
    exists = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if exists is None:
        return 0
    (version,) = connection.execute(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version"
    ).fetchone()
    return int(version)
