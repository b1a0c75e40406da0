"""The write turn between processes on one SQLite file: an advisory lock beside it.

Only one connection at a time may write a SQLite file. One that finds the lock taken
waits in SQLite's busy handler, which sleeps and looks again (1, 2, 5, 10, 15, 20, 25
ms...) rather than being woken: two API processes submitting at full rate each found
the other's transaction under way, slept past its end, and the first one, back at
once with its next group, took the lock again. Each process spent a third of its time
asleep in `BEGIN IMMEDIATE` and the two together stored fewer jobs than one alone.

`WriteTurn` makes the writers of this machine queue in the kernel instead: before its
`BEGIN IMMEDIATE` a writer takes an exclusive `flock` on `<database>-lock`, and gives
it up after its commit; the next one waiting is woken as it does. A group of
submissions waits for the turn before it is closed (`SqliteDatabase.write_turn`), so
what arrives while the other process commits goes in this process's next commit
rather than the one after. SQLite's own locking
is unchanged and still decides what is safe (a writer that does not take this lock,
an older version say, is waited for as before); when the lock file cannot be opened
(a read-only folder), writers go without it.
"""

from __future__ import annotations

import fcntl
import logging
import os

log = logging.getLogger("backroom.store.sqlite")

LOCK_SUFFIX = "-lock"


class WriteTurn:
    """An exclusive advisory lock on `<path>-lock`, taken around each write transaction."""

    def __init__(self, path: str) -> None:
        self._path = path + LOCK_SUFFIX
        self._descriptor: int | None = None
        self._usable = True
        # A descriptor inherited through fork shares its lock with the parent's: a
        # process opens its own.
        self._opened_by = 0
        self.holding = False
        """Whether this process holds the lock (read and changed on the database thread)."""

    def take(self) -> None:
        """Wait for the lock (blocking this thread) unless this process holds it."""
        descriptor = self._open()
        if descriptor is not None and not self.holding:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            self.holding = True

    def give_back(self) -> None:
        """Give the lock up, if held."""
        if self._descriptor is not None and self.holding:
            fcntl.flock(self._descriptor, fcntl.LOCK_UN)
        self.holding = False

    def close(self) -> None:
        """Close the lock file (the file stays, for the other processes)."""
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None

    def _open(self) -> int | None:
        if self._descriptor is not None and self._opened_by != os.getpid():
            self._descriptor = None  # the parent's: left open for it
            self.holding = False
        if self._descriptor is None and self._usable:
            try:
                # Read-only suffices for flock: a file another user made is usable too.
                self._descriptor = os.open(self._path, os.O_RDONLY | os.O_CREAT, 0o644)
                self._opened_by = os.getpid()
            except OSError as error:
                log.warning(
                    "writing without %s (SQLite's busy wait instead): %s", self._path, error
                )
                self._usable = False
        return self._descriptor
