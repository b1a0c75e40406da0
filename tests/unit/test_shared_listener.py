"""`serve --processes N` shares new connections out (`SharedListener`).

asyncio accepts until the socket has none left, so one process took a whole burst.
A process takes one connection per wake-up, and lets one wait while another process
holds fewer, but not for ever (the other may be stopped).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from backroom.api.processes import _DECLINES, SharedListener, shared_listener


@pytest.fixture
def listener() -> Iterator[SharedListener]:
    plain = socket.create_server(("127.0.0.1", 0))
    shared = shared_listener(plain, 2)
    shared.serve_as(0)
    with shared:
        yield shared


def _connect(listener: SharedListener, count: int) -> list[socket.socket]:
    # On loopback the handshake is done when connect returns: accept finds it waiting.
    return [socket.create_connection(listener.getsockname()[:2]) for _ in range(count)]


def _accepts(listener: SharedListener) -> bool:
    try:
        accepted, _ = listener.accept()
    except BlockingIOError:
        return False
    accepted.close()
    return True


def test_one_connection_per_wake_up(listener: SharedListener) -> None:
    listener._counts[1] = 5  # the other process holds more
    clients = _connect(listener, 3)
    try:
        taken = [_accepts(listener) for _ in range(4)]
    finally:
        for client in clients:
            client.close()
    assert taken == [True, False, True, False]


def test_a_process_ahead_lets_connections_wait_a_while(listener: SharedListener) -> None:
    listener._counts[1] = 0  # the other process holds none
    clients = _connect(listener, 2)
    kept, _ = listener.accept()  # one held open: this process is ahead
    try:
        listener._took_one = False  # a new wake-up
        declined = [_accepts(listener) for _ in range(_DECLINES)]
        taken_anyway = _accepts(listener)
    finally:
        kept.close()
        for client in clients:
            client.close()
    assert (any(declined), taken_anyway) == (False, True)
    assert listener._counts[0] == 2


def test_closed_connections_no_longer_count(listener: SharedListener) -> None:
    listener._counts[1] = 0
    clients = _connect(listener, 2)
    first, _ = listener.accept()
    first.close()
    listener._took_one = False
    try:
        assert _accepts(listener)  # it holds none open again: not ahead
    finally:
        for client in clients:
            client.close()
