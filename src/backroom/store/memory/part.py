"""What every part of `MemoryStore` shares: the tables and the new-work hints.

`MemoryStore` is assembled from one class per part of the `Store` protocol
(`MemoryJobs`, `MemoryLeases`, ...), each in the module whose functions change the
tables for it, as the SQL backends' parts are.
"""

from __future__ import annotations

from backroom.store.memory.tables import MemoryTables
from backroom.store.new_work import NewWorkHints


class MemoryPart:
    """The state the parts of `MemoryStore` share; `MemoryStore.__init__` sets it."""

    _tables: MemoryTables
    _new_work: NewWorkHints
