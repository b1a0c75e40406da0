"""Noticing other processes' commits to a SQLite file: `PRAGMA data_version`.

SQLite has no notifications between processes, so a worker would otherwise hear of a
job submitted by another process only at its next poll. `data_version` changes
whenever another connection commits to the file; reading it opens a read transaction
on the WAL index in shared memory and touches no page, a few microseconds. A worker
runs the check on its event loop every few milliseconds while it waits with free
slots, and claims when it reports a change (see `Worker`).
"""

from __future__ import annotations

import sqlite3


class CommitWatch:
    """Callable: True when another connection may have committed since the last call.

    Its own connection, opened on first use, never waits for a lock (busy timeout 0):
    when SQLite cannot answer at once (a lock held during WAL recovery, say), the check
    says "changed", and the worker looks for work, which is never wrong, only early.
    """

    def __init__(self, path: str) -> None:
        self._path = path
        self._connection: sqlite3.Connection | None = None
        self._version: int | None = None

    def __call__(self) -> bool:
        """Whether the file may have changed since the last call (True the first time)."""
        try:
            if self._connection is None:
                self._connection = sqlite3.connect(
                    self._path, timeout=0, isolation_level=None, check_same_thread=False
                )
            row = self._connection.execute("PRAGMA data_version").fetchone()
        except sqlite3.Error:
            self.close()
            return True
        version = int(row[0])
        changed = version != self._version
        self._version = version
        return changed

    def close(self) -> None:
        """Close the connection; a later call opens a new one."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
            self._version = None
