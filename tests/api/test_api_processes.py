"""`backroom serve --processes 2`: two server processes answer on one port.

Each child is paused in turn (SIGSTOP): the other alone still answers new connections,
so both serve, on one database; SIGTERM to the parent stops both and it exits 0.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_process import Server, serve_process

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    database = f"sqlite:///{tmp_path / 'server.db'}"
    options = ("--db", database, "--processes", "2", "--no-worker", "--log-level", "warning")
    with serve_process(tmp_path, *options) as server:
        yield server


def _children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _submit_on_a_new_connection(server: Server, number: int) -> int:
    # A new client each time: a new connection, accepted by whichever process can.
    headers = {"Authorization": f"Bearer {server.key}"}
    body = {"task": "demo.noop", "input": {"n": number}}
    answer = httpx.post(f"{server.url}/v1/jobs", json=body, headers=headers, timeout=10)
    assert answer.status_code == 202, answer.text
    job_id: int = answer.json()["id"]
    return job_id


def test_each_of_two_processes_serves_alone_while_the_other_is_paused(server: Server) -> None:
    children = _children(server.process.pid)
    assert len(children) == 2
    submitted = []
    for paused in children:
        os.kill(paused, signal.SIGSTOP)
        try:
            submitted += [_submit_on_a_new_connection(server, n) for n in range(3)]
        finally:
            os.kill(paused, signal.SIGCONT)

    headers = {"Authorization": f"Bearer {server.key}"}
    for job_id in submitted:
        answer = httpx.get(f"{server.url}/v1/jobs/{job_id}", headers=headers, timeout=10)
        assert answer.status_code == 200
    assert len(set(submitted)) == 6
