"""Storage backends behind one protocol; `open_store(url)` picks one by URL."""

from __future__ import annotations

from backroom.core.errors import ConfigError
from backroom.store.protocol import Store
from backroom.store.records import HeartbeatResult, JobFilter, OnceRecord, QueueStats, RedriveFilter

__all__ = [
    "HeartbeatResult",
    "JobFilter",
    "OnceRecord",
    "QueueStats",
    "RedriveFilter",
    "Store",
    "open_store",
]


def open_store(url: str) -> Store:
    """A store for `url`: `sqlite:///path.db`, `sqlite://:memory:`, `postgresql://...`,
    or `memory://` (in process memory, not durable: for tests)."""
    if url.startswith("sqlite:"):
        from backroom.store.sqlite.store import SqliteStore

        return SqliteStore.from_url(url)
    if url.startswith(("postgresql:", "postgres:")):
        from backroom.store.postgres.store import PostgresStore

        return PostgresStore.from_url(url)
    if url.startswith("memory:"):
        from backroom.store.memory.store import MemoryStore

        return MemoryStore.from_url(url)
    raise ConfigError(
        f"unsupported database URL {url!r}: use sqlite:///FILE, postgresql://... or memory://"
    )
