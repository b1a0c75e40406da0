"""The embedded default store: one SQLite file, shared safely by many processes."""

from backroom.store.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
