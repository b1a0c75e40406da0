"""What every part of `SqliteStore` shares: the database thread and the new-work hints.

`SqliteStore` is assembled from one class per part of the `Store` protocol
(`SqliteJobs`, `SqliteLeases`, ...), each in the module that holds its SQL: the
module's functions run on the database thread, its part's methods on the event loop.
"""

from __future__ import annotations

from backroom.store.new_work import NewWorkHints
from backroom.store.sqlite.commit_watch import CommitWatch
from backroom.store.sqlite.connection import SqliteDatabase
from backroom.store.sqlite.wake_sockets import WakeSockets


class SqlitePart:
    """The state the parts of `SqliteStore` share; `SqliteStore.__init__` sets it."""

    _database: SqliteDatabase
    _new_work: NewWorkHints
    _commit_watch: CommitWatch | None
    _wake_sockets: WakeSockets | None
