"""The in-memory store (`memory://`): every `Store` call on process memory, for tests."""

from backroom.store.memory.store import MemoryStore
from backroom.store.memory.tables import MemoryTables

__all__ = ["MemoryStore", "MemoryTables"]
