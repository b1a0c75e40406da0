"""New-work datagrams between the processes on one SQLite file.

SQLite cannot notify other processes, so each process listening for new work (a
worker) binds a unix datagram socket in a folder of its own user's, named after the
database file; a process that queues claimable work sends one byte to every other
socket there. A datagram is a hint, like PostgreSQL's NOTIFY: one lost (a full
receive buffer already holds a wake-up; a folder another user made is not used) is
covered by the worker's commit watch and its poll.

The folder is `<tmp>/backroom-wake-<uid>-<hash of the file's real path>`, mode 0700:
short enough for a socket path, and reachable only by processes of the same user.
Sockets left by a process that died are removed by the next sender that finds them
refusing.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import secrets
import socket
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("backroom.store.sqlite")

_SUFFIX = ".sock"
_RELIST = 64


def wake_folder(database: str) -> Path:
    """Where the processes on `database` keep their wake-up sockets."""
    digest = hashlib.sha256(os.path.realpath(database).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"backroom-wake-{os.getuid()}-{digest}"


def _private(info: os.stat_result) -> bool:
    """True for a folder of this user's that no other user may enter."""
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def _own_folder(folder: Path) -> bool:
    """Create `folder` (0700) or accept it only if it is ours and closed to others."""
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    return _private(folder.lstat())


class WakeSockets:
    """Sends this process's new-work hints to the other processes on the file, and
    hears theirs (see the module's docstring)."""

    def __init__(self, database: str) -> None:
        self._folder = wake_folder(database)
        self._usable = hasattr(socket, "AF_UNIX")
        self._sender: socket.socket | None = None
        self._listener: socket.socket | None = None
        self._name = ""
        self._callbacks: list[Callable[[], None]] = []
        # The folder's listing, kept until the folder changes (its mtime moves) or for
        # `_RELIST` announcements (an mtime may not move for a change within its tick).
        self._listing: tuple[int, list[str]] = (-1, [])
        self._uses_left = 0

    def listen(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the running loop whenever another process announces work."""
        self._callbacks.append(callback)
        if self._listener is not None or not self._usable:
            return
        try:
            if not _own_folder(self._folder):
                log.warning("not using %s for wake-ups: not private to this user", self._folder)
                self._usable = False
                return
            self._name = f"{os.getpid()}-{secrets.token_hex(4)}{_SUFFIX}"
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            listener.setblocking(False)
            listener.bind(str(self._folder / self._name))
        except OSError as error:
            log.warning("no wake-up socket (the worker polls instead): %s", error)
            self._usable = False
            return
        self._listener = listener
        asyncio.get_running_loop().add_reader(listener.fileno(), self._heard)

    def announce(self) -> None:
        """Tell every other listening process on the file that work may be claimable."""
        if not self._usable:
            return
        try:
            names = self._names()
        except OSError:
            return  # no folder: nobody listens yet
        if self._sender is None:
            self._sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self._sender.setblocking(False)
        for name in names:
            if name == self._name:
                continue
            path = self._folder / name
            try:
                self._sender.sendto(b"w", str(path))
            except BlockingIOError:
                pass  # its buffer is full of wake-ups already
            except (ConnectionRefusedError, FileNotFoundError):
                with contextlib.suppress(OSError):
                    path.unlink()  # its process is gone
            except OSError as error:
                log.debug("wake-up to %s not sent: %s", path, error)

    def close(self) -> None:
        """Stop listening and remove this process's socket."""
        if self._listener is not None:
            with contextlib.suppress(RuntimeError):  # the loop may be closed already
                asyncio.get_running_loop().remove_reader(self._listener.fileno())
            self._listener.close()
            self._listener = None
            with contextlib.suppress(OSError):
                (self._folder / self._name).unlink()
                self._folder.rmdir()  # the last one out removes the folder
        if self._sender is not None:
            self._sender.close()
            self._sender = None

    def _names(self) -> list[str]:
        info = self._folder.lstat()
        if not _private(info):
            return []  # another user's folder: nothing of ours listens there
        changed = info.st_mtime_ns
        self._uses_left -= 1
        if changed != self._listing[0] or self._uses_left < 0:
            names = [entry.name for entry in self._folder.iterdir() if entry.name.endswith(_SUFFIX)]
            self._listing = (changed, names)
            self._uses_left = _RELIST
        return self._listing[1]

    def _heard(self) -> None:
        assert self._listener is not None
        with contextlib.suppress(BlockingIOError):
            while True:  # drain: many datagrams are one wake-up
                self._listener.recv(64)
        for callback in self._callbacks:
            callback()
