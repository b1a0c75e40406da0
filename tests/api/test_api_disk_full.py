"""A real `backroom serve` whose SQLite database sits on a small tmpfs that fills up.

While the disk is full, submissions get a 503 problem with Retry-After on a connection
that stays open, and /readyz says not ready; once space is freed, both recover by
themselves. Every acknowledged job is kept, and no refused one was stored. Mounting
needs root: without it the test skips (`test_api_store_full.py` covers the same on
any machine with `max_page_count`).
"""

from __future__ import annotations

import errno
import http.client
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from server_process import Server, serve_process

from backroom.clock import SystemClock

pytestmark = pytest.mark.slow

DISK_BYTES = 4 * 1024 * 1024
BIG_INPUT = "x" * 50_000
RECOVERY_DEADLINE_MS = 20_000


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of DISK_BYTES mounted in the test's folder; unmounted afterwards."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    command = ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(mount_point)]
    try:
        mounted = subprocess.run(command, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        pytest.skip("no mount command here")
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)


def fill(disk: Path) -> Path:
    """Write a file that takes every free byte of `disk`; the file."""
    filler = disk / "filler"
    with filler.open("wb") as out:
        try:
            while True:
                out.write(b"\0" * 65_536)
                out.flush()
        except OSError as error:
            assert error.errno == errno.ENOSPC
    return filler


class Connection:
    """One keep-alive HTTP connection to the server, which must never be replaced."""

    def __init__(self, server: Server) -> None:
        address = urlsplit(server.url)
        assert address.hostname is not None
        self._http = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
        self._http.connect()
        self._socket = self._http.sock
        self._auth = {"Authorization": f"Bearer {server.key}"}

    def request(
        self, method: str, path: str, body: object = None
    ) -> tuple[int, dict[str, str], bytes]:
        headers = dict(self._auth)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        self._http.request(method, path, body=data, headers=headers)
        response = self._http.getresponse()
        content = response.read()
        assert self._http.sock is self._socket, "the server closed the connection"
        return response.status, {k.lower(): v for k, v in response.getheaders()}, content

    def close(self) -> None:
        self._http.close()


def wait_until_ready(server: Server) -> None:
    clock = SystemClock()
    deadline = clock.now() + RECOVERY_DEADLINE_MS
    while httpx.get(f"{server.url}/readyz").status_code != 200:
        assert clock.now() < deadline, "the server did not become ready again"
        time.sleep(0.05)  # a real process: poll it, up to the deadline


def test_a_full_disk_refuses_with_503_keeps_the_connection_and_recovers(
    small_disk: Path, tmp_path: Path
) -> None:
    database = f"sqlite:///{small_disk / 'server.db'}"
    with serve_process(
        tmp_path, "--db", database, "--no-worker", "--log-level", "warning"
    ) as server:
        connection = Connection(server)
        job = {"task": "demo.noop", "input": BIG_INPUT}
        acknowledged: list[int] = []
        status, _, body = connection.request("POST", "/v1/jobs", job)
        assert status == 202, body
        acknowledged.append(json.loads(body)["id"])

        filler = fill(small_disk)
        refused = None
        for _ in range(200):
            status, headers, body = connection.request("POST", "/v1/jobs", job)
            if status == 503:
                refused = (headers, json.loads(body))
                break
            assert status == 202, body
            acknowledged.append(json.loads(body)["id"])
        assert refused is not None, "the disk never filled up"
        headers, problem = refused
        assert headers["content-type"] == "application/problem+json"
        assert int(headers["retry-after"]) >= 1
        assert problem["status"] == 503
        status, _, _ = connection.request("GET", "/readyz")
        assert status == 503

        filler.unlink()
        wait_until_ready(server)

        status, _, body = connection.request("POST", "/v1/jobs", job)
        assert status == 202, body
        acknowledged.append(json.loads(body)["id"])
        status, _, body = connection.request("GET", "/v1/jobs?limit=200")
        assert sorted(entry["id"] for entry in json.loads(body)["jobs"]) == acknowledged
        connection.close()
        assert "Traceback" not in server.stderr.read_text()
