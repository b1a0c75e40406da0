"""SQLite's wake-up datagrams: a store hears another store's new work on the same file.

Real unix sockets between two stores of one process (each is "another process" to the
other); the waits have deadlines, and nothing asserts how long a wake-up took.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from backroom.core.job import NewJob
from backroom.store.sqlite.store import SqliteStore
from backroom.store.sqlite.wake_sockets import wake_folder

T0 = 1_700_000_000_000


async def opened(path: Path) -> SqliteStore:
    store = SqliteStore(str(path))
    await store.migrate()
    return store


async def test_a_submission_wakes_the_store_listening_on_the_same_file(tmp_path: Path) -> None:
    worker_side, submitter = await opened(tmp_path / "jobs.db"), await opened(tmp_path / "jobs.db")
    woken = asyncio.Event()
    worker_side.on_new_work(woken.set)
    try:
        await submitter.submit(NewJob("noop", None, T0), T0)
        await asyncio.wait_for(woken.wait(), timeout=30)
    finally:
        await worker_side.close()
        await submitter.close()

    assert woken.is_set()
    assert not wake_folder(str(tmp_path / "jobs.db")).exists()  # the last one out removed it


async def test_a_dead_listeners_socket_is_removed_by_the_next_sender(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    folder = wake_folder(str(path))
    folder.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dead.bind(str(folder / "1-dead.sock"))
    dead.close()  # its file stays, as a killed process's would
    submitter = await opened(path)
    try:
        await submitter.submit(NewJob("noop", None, T0), T0)
    finally:
        # Closing awaits the database thread: the announcement runs meanwhile.
        await submitter.close()
    left = list(folder.iterdir())
    folder.rmdir()

    assert left == []


async def test_a_folder_open_to_other_users_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    folder = wake_folder(str(path))
    folder.mkdir(mode=0o700)
    folder.chmod(0o777)
    store = await opened(path)
    try:
        store.on_new_work(lambda: None)
        bound = list(folder.iterdir())
    finally:
        await store.close()
        folder.rmdir()

    assert bound == []
