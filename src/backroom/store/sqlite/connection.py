"""One SQLite connection, owned by one thread, that each store call reaches in one hop.

sqlite3 blocks, so the connection lives on a single worker thread and every store
call hands it one function through `loop.run_in_executor` (which the virtual-time
loop of `backroom.clock` counts, keeping simulated time still while SQL runs).
Writes run inside `BEGIN IMMEDIATE`, so a transaction takes the write lock before it
reads anything and never has to be upgraded; a lock still held by another process
after `busy_timeout` is waited for again, a bounded number of times.

Writes are group-committed: calls that arrive while a transaction is running wait for
it, then all run in the next transaction, each under a SAVEPOINT of its own (so one
call's error undoes only its own changes), and share one commit. With
synchronous=FULL a commit is an fsync, so a worker's finish and its next claim, or
many API requests' submissions, cost one fsync instead of one each.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from backroom.core.errors import ConfigError, StoreError, StoreUnavailable
from backroom.store.sqlite.write_lock import WriteTurn

T = TypeVar("T")

Work = Callable[[sqlite3.Connection], T]
"""A function that does one store call's SQL on the connection."""

SYNCHRONOUS_LEVELS = frozenset({"OFF", "NORMAL", "FULL", "EXTRA"})

# How many times a transaction that found the database locked (after waiting
# busy_timeout each time) is started again before the caller is told.
_BUSY_ATTEMPTS = 5


# A write that must find fresh pages to commit: what tells, after the database was
# found full, whether space has come back (see `SqliteDatabase.check_writable`).
_PROBE_BYTES = 64 * 1024
_PROBE = (
    "CREATE TABLE backroom_space_probe (filler BLOB)",
    f"INSERT INTO backroom_space_probe VALUES (zeroblob({_PROBE_BYTES}))",
    "DROP TABLE backroom_space_probe",
)


def _primary_code(error: BaseException) -> int:
    # Errors raised by the sqlite3 module itself, not by SQLite, carry no code.
    return getattr(error, "sqlite_errorcode", 0) & 0xFF


def _is_busy(error: sqlite3.Error) -> bool:
    """True when `error` means another connection holds a lock we need."""
    return _primary_code(error) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _probe_free_space(connection: sqlite3.Connection) -> None:
    for statement in _PROBE:
        connection.execute(statement)


@dataclass(slots=True)
class _Write:
    """One pending write call: its work, and the future its caller awaits."""

    work: Work[Any]
    future: asyncio.Future[Any]


@dataclass(slots=True)
class _Done:
    """What one write call of a group returned or raised."""

    value: Any = None
    error: BaseException | None = None


class SqliteDatabase:
    """A SQLite file (or `:memory:`) in WAL mode, reached through its own thread.

    `synchronous` is SQLite's durability level: FULL (the default) syncs the WAL on
    every commit, so a committed transaction survives a power cut.
    """

    def __init__(
        self, path: str, *, synchronous: str = "FULL", busy_timeout_ms: int = 5000
    ) -> None:
        level = synchronous.upper()
        if level not in SYNCHRONOUS_LEVELS:
            raise ConfigError(f"synchronous must be one of {sorted(SYNCHRONOUS_LEVELS)}")
        self._path = path
        self._synchronous = level
        self._busy_timeout_ms = busy_timeout_ms
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="backroom-sqlite")
        self._connection: sqlite3.Connection | None = None
        self._closed = False
        self._pending: list[_Write] = []
        self._committer: asyncio.Task[None] | None = None
        # Set when a write found the database full; `check_writable` clears it.
        self._full = False
        self._commit_callbacks: list[Callable[[], None]] = []
        self._write_turn = None if path == ":memory:" else WriteTurn(path)

    def on_commit(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the event loop after each write transaction that committed
        a change.

        A transaction that changed no row (a claim that found nothing, a reader's
        cursor already in place) calls nothing: a callback that writes would otherwise
        wake itself forever.
        """
        self._commit_callbacks.append(callback)

    async def write(self, work: Work[T]) -> T:
        """Run `work` in a write transaction on the database thread; return its result.

        The transaction may be shared with other calls made meanwhile (group commit);
        `work` sees their changes as if they had run before it.
        """
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending.append(_Write(work, future))
        if self._committer is None:
            self._committer = asyncio.create_task(self._commit_pending())
        return await future

    async def _commit_pending(self) -> None:
        try:
            while self._pending:
                group, self._pending = self._pending, []
                try:
                    results, changed = await self._hop(
                        partial(self._transaction, "BEGIN IMMEDIATE", partial(_run_group, group))
                    )
                except BaseException as error:  # the whole group failed: tell every caller
                    results = [_Done(error=error) for _ in group]
                else:
                    for callback in self._commit_callbacks if changed else ():
                        callback()
                for call, done in zip(group, results, strict=True):
                    if call.future.done():
                        continue
                    if done.error is None:
                        call.future.set_result(done.value)
                    else:
                        call.future.set_exception(self._store_error(done.error))
        finally:
            self._committer = None

    async def check_writable(self) -> None:
        """Raise `StoreUnavailable` while the database cannot take writes.

        Only once a write found it full (the disk, or `max_page_count`): then a write
        that needs fresh pages probes whether space has come back, and clears the mark.
        """
        if self._full:
            await self.write(_probe_free_space)
            self._full = False

    async def read(self, work: Work[T]) -> T:
        """Run `work`, which only reads, on the database thread; return its result."""
        return await self._hop(partial(self._transaction, None, work))

    async def close(self) -> None:
        """Close the connection and let the thread end; closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        await self._hop(self._disconnect)
        self._executor.shutdown(wait=False)

    async def _hop(self, call: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, call)

    @contextlib.asynccontextmanager
    async def write_turn(self) -> AsyncIterator[None]:
        """Wait until this process may write (see `sqlite.write_lock`), then run the
        block: its first write transaction uses the turn and gives it up."""
        turn = self._write_turn
        if turn is None:
            yield
            return
        await self._hop(turn.take)
        try:
            yield
        finally:
            if turn.holding:  # no write used it
                await self._hop(turn.give_back)

    def _transaction(self, begin: str | None, work: Work[T]) -> T:
        if begin is None or self._write_turn is None:
            return self._attempts(begin, work)
        self._write_turn.take()
        try:
            return self._attempts(begin, work)
        finally:
            self._write_turn.give_back()

    def _attempts(self, begin: str | None, work: Work[T]) -> T:
        busy_attempts_left = _BUSY_ATTEMPTS
        while True:
            try:
                return self._run(begin, work)
            except sqlite3.Error as error:
                busy_attempts_left -= 1
                if not _is_busy(error):
                    raise self._store_error(error) from error
                if busy_attempts_left == 0:
                    raise StoreUnavailable(f"SQLite database {self._path} stayed locked") from error

    def _run(self, begin: str | None, work: Work[T]) -> T:
        connection = self._connect()
        if begin is None:
            return work(connection)
        connection.execute(begin)
        try:
            result = work(connection)
            connection.execute("COMMIT")
        except BaseException:
            # SQLite rolls some failed statements back itself; only roll back what is open.
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        return result

    def _store_error(self, error: BaseException) -> BaseException:
        """The store's error for what a call raised: SQLite's errors become `StoreError`,
        and a full database `StoreUnavailable` (it may take writes again later)."""
        if not isinstance(error, sqlite3.Error):
            return error
        if _primary_code(error) == sqlite3.SQLITE_FULL:
            self._full = True
            converted: StoreError = StoreUnavailable(
                f"SQLite database {self._path} is full (its disk, or max_page_count): "
                "nothing was stored"
            )
        else:
            converted = StoreError(f"SQLite: {error}")
        converted.__cause__ = error
        return converted

    def _connect(self) -> sqlite3.Connection:
        if self._connection is not None:
            return self._connection
        connection = sqlite3.connect(
            self._path, timeout=self._busy_timeout_ms / 1000, isolation_level=None
        )
        try:
            connection.row_factory = sqlite3.Row
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(f"PRAGMA synchronous={self._synchronous}")
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        return connection

    def _disconnect(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._write_turn is not None:
            self._write_turn.close()


def _run_group(group: list[_Write], connection: sqlite3.Connection) -> tuple[list[_Done], bool]:
    """Run each call of a group under its own SAVEPOINT inside the open transaction;
    what each returned, and whether any row changed."""
    changes_before = connection.total_changes
    results: list[_Done] = []
    for call in group:
        connection.execute("SAVEPOINT call")
        try:
            value = call.work(connection)
        except Exception as error:
            if not connection.in_transaction:
                # SQLite rolled the whole transaction back (a full disk can): nothing of
                # the group is stored, so every call of it fails.
                raise
            connection.execute("ROLLBACK TO call")
            connection.execute("RELEASE call")
            if isinstance(error, sqlite3.Error) and _is_busy(error):
                raise  # the lock was lost: retry the whole group
            results.append(_Done(error=error))
            continue
        connection.execute("RELEASE call")
        results.append(_Done(value=value))
    return results, connection.total_changes != changes_before
