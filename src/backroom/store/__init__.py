"""Storage backends behind one protocol; `open_store(url)` picks one by URL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from backroom.core.errors import ConfigError
from backroom.store.protocol import Store
from backroom.store.records import HeartbeatResult, JobFilter, OnceRecord, QueueStats, RedriveFilter

if TYPE_CHECKING:
    from backroom.store.memory.store import MemoryStore
    from backroom.store.postgres.store import PostgresStore
    from backroom.store.sqlite.store import SqliteStore

__all__ = [
    "HeartbeatResult",
    "JobFilter",
    "OnceRecord",
    "QueueStats",
    "RedriveFilter",
    "Store",
    "open_store",
    "store_class",
]


def open_store(url: str) -> Store:
    """A store for `url`: `sqlite:///path.db`, `sqlite://:memory:`, `postgresql://...`,
    or `memory://` (in process memory, not durable: for tests)."""
    return store_class(url).from_url(url)


def store_class(url: str) -> type[SqliteStore | PostgresStore | MemoryStore]:
    """The backend `open_store(url)` makes, imported but not opened: a process about to
    fork workers imports it once, not once in each of them."""
    if url.startswith("sqlite:"):
        from backroom.store.sqlite.store import SqliteStore

        return SqliteStore
    if url.startswith(("postgresql:", "postgres:")):
        from backroom.store.postgres.store import PostgresStore

        return PostgresStore
    if url.startswith("memory:"):
        from backroom.store.memory.store import MemoryStore

        return MemoryStore
    raise ConfigError(
        f"unsupported database URL {url!r}: use sqlite:///FILE, postgresql://... or memory://"
    )
