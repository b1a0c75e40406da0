"""Writers on one SQLite file take turns through an flock on `<file>-lock`.

SQLite's busy handler sleeps between looks at a taken lock; waiting on the flock, the
next writer is woken when the lock is given up. Each write transaction holds it from
before `BEGIN IMMEDIATE` to after its commit; reads never take it.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import sqlite3
from pathlib import Path

import pytest

from backroom.clock import SystemClock, block
from backroom.store.sqlite.connection import SqliteDatabase
from backroom.store.sqlite.write_lock import LOCK_SUFFIX


def _taken_elsewhere(path: Path) -> bool:
    """Whether another holder has the lock (tried on a descriptor of our own)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)  # closing gives up a lock we took
    return False


async def test_a_write_holds_the_turn_and_a_read_does_not(tmp_path: Path) -> None:
    database = SqliteDatabase(str(tmp_path / "jobs.db"))
    lock = tmp_path / f"jobs.db{LOCK_SUFFIX}"

    def write(connection: sqlite3.Connection) -> bool:
        connection.execute("CREATE TABLE IF NOT EXISTS t (x)")
        return _taken_elsewhere(lock)

    try:
        during_write = await database.write(write)
        during_read = await database.read(lambda _connection: _taken_elsewhere(lock))
    finally:
        await database.close()

    assert (during_write, during_read, _taken_elsewhere(lock)) == (True, False, False)


def _waiters(path: Path) -> int:
    """How many flock waiters /proc/locks shows blocked on `path`."""
    inode = f":{path.stat().st_ino} "
    lines = Path("/proc/locks").read_text().splitlines()
    return sum(1 for line in lines if "->" in line and "FLOCK" in line and inode in line)


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="reads Linux's /proc/locks")
async def test_a_writer_waits_for_another_process_turn(tmp_path: Path) -> None:
    database = SqliteDatabase(str(tmp_path / "jobs.db"))
    lock = tmp_path / f"jobs.db{LOCK_SUFFIX}"
    other = os.open(lock, os.O_RDONLY | os.O_CREAT, 0o644)
    fcntl.flock(other, fcntl.LOCK_EX)  # as another process's writer would
    wrote: list[bool] = []
    try:
        task = asyncio.ensure_future(database.write(lambda _connection: wrote.append(True)))
        deadline = SystemClock().now() + 10_000
        while _waiters(lock) == 0 and SystemClock().now() < deadline:
            await asyncio.to_thread(block, 0.001)
        blocked = (_waiters(lock), list(wrote))
        fcntl.flock(other, fcntl.LOCK_UN)
        await task
    finally:
        os.close(other)
        await database.close()
    assert blocked == (1, [])
    assert wrote == [True]


async def test_a_database_in_memory_has_no_lock_file(tmp_path: Path) -> None:
    database = SqliteDatabase(":memory:")
    try:
        await database.write(lambda connection: connection.execute("CREATE TABLE t (x)"))
    finally:
        await database.close()
    assert not list(tmp_path.iterdir())
