"""What a hostile client can make a real `backroom serve` hold (issue 9, items 4 and 5):
request heads, URLs, connections that send nothing, too many connections, and keys
sent in a query string, over real sockets on loopback."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_process import Server, serve_process

pytestmark = pytest.mark.slow

MAX_CONNECTIONS = 4
HEADER_TIMEOUT_S = 1
# A safety net for reads that the server should end, never an assertion on time.
READ_DEADLINE_S = 30


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with small limits, so that they are quick to reach."""
    options = ["--max-connections", str(MAX_CONNECTIONS), "--no-worker"]
    options += ["--header-timeout", str(HEADER_TIMEOUT_S), "--log-level", "info"]
    folder = tmp_path_factory.mktemp("limits")
    options += ["--db", f"sqlite:///{folder / 'server.db'}"]
    with serve_process(folder, *options) as started:
        yield started


def _connect(server: Server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=READ_DEADLINE_S)


def _send(connection: socket.socket, data: bytes) -> None:
    """Send what the server takes; it may close the connection part way (a refusal)."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        connection.sendall(data)


def _answer(connection: socket.socket) -> bytes:
    """Everything the server writes until it closes the connection."""
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass  # the server closed with our unread bytes: what it wrote came first
    return received


def _request(path: str = "/healthz", *headers: str) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: backroom.test", *headers, "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _rss_kib(server: Server) -> int:
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    (line,) = [line for line in status.splitlines() if line.startswith("VmRSS:")]
    return int(line.split()[1])


def test_a_100_kb_header_is_a_431(server: Server) -> None:
    with _connect(server) as connection:
        _send(connection, _request("/healthz", "X-Big: " + "a" * 100_000))
        answer = _answer(connection)

    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b"application/problem+json" in answer


def test_endless_headers_are_cut_off_and_memory_stays_bounded(server: Server) -> None:
    before = _rss_kib(server)
    connections = [_connect(server) for _ in range(3)]
    chunk = b"a" * 1_000_000
    for connection in connections:
        _send(connection, b"GET /healthz HTTP/1.1\r\nX-Endless: ")
        # 20 MB each, if the server read it all; it must stop reading long before.
        for _ in range(20):
            _send(connection, chunk)
    answers = [_answer(connection) for connection in connections]
    for connection in connections:
        connection.close()

    assert all(answer.startswith(b"HTTP/1.1 431 ") for answer in answers)
    assert _rss_kib(server) - before < 30_000  # 60 MB were sent; well under half is kept


def test_too_many_headers_is_a_431_and_a_long_url_a_414(server: Server) -> None:
    with _connect(server) as connection:
        _send(connection, _request("/healthz", *(f"X-H{n}: v" for n in range(200))))
        many = _answer(connection)
    with _connect(server) as connection:
        _send(connection, _request("/healthz?x=" + "a" * 10_000))
        long_url = _answer(connection)

    assert many.startswith(b"HTTP/1.1 431 ")
    assert long_url.startswith(b"HTTP/1.1 414 ")


def test_a_connection_that_sends_nothing_is_closed_with_a_408(server: Server) -> None:
    with _connect(server) as silent, _connect(server) as trickling:
        trickling.sendall(b"GET /healthz HTTP/1.1\r\n")  # then nothing more
        assert _answer(silent).startswith(b"HTTP/1.1 408 ")
        assert _answer(trickling).startswith(b"HTTP/1.1 408 ")


def test_connections_over_the_limit_get_a_503(server: Server) -> None:
    idle = [_connect(server) for _ in range(MAX_CONNECTIONS)]
    try:
        # Each idle connection is served: the server sees it before the next one opens.
        for connection in idle:
            connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            assert connection.recv(65536).startswith(b"HTTP/1.1 200 ")
        with _connect(server) as extra:
            _send(extra, _request())
            refused = _answer(extra)
    finally:
        for connection in idle:
            connection.close()

    assert refused.startswith(b"HTTP/1.1 503 "), refused[:200]


def test_the_access_log_redacts_keys_in_a_query_string(server: Server) -> None:
    query = "?api_key=br_secret-one&limit=5&token=secret-two&key=secret-three"
    with _connect(server) as connection:
        _send(connection, _request("/v1/jobs" + query))
        _answer(connection)

    logged = server.log_line_with("/v1/jobs?")
    assert "/v1/jobs?api_key=[REDACTED]&limit=5&token=[REDACTED]&key=[REDACTED]" in logged
    assert "secret" not in logged
