"""What the HTTP benchmarks share: the servers under test and the load they are given.

    python -m bench.api_servers PORT [PROCESSES]    # the bare FastAPI endpoint alone

Each server is a real process on loopback: `backroom serve` (with `--processes N` for
N server processes on one port), or the bare FastAPI endpoint, which validates the same
request model and answers a fixed 202, under the same uvicorn settings (httptools, one
process unless told). The load comes from one client process of raw keep-alive HTTP/1.1
connections (a Python HTTP client library would be slower than the servers).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from backroom.api.models.jobs import SubmitRequest
from backroom.clock import SystemClock

HOST = "127.0.0.1"
CLI = "from backroom.cli.main import main; main()"


def bare_api() -> FastAPI:
    """Only POST /v1/jobs, validating the body with backroom's own model."""
    api = FastAPI()

    @api.post("/v1/jobs", status_code=202)
    async def submit(body: SubmitRequest) -> dict[str, Any]:
        return {"id": 1, "task": body.task, "status": "queued"}

    return api


def run_bare_server(port: int, processes: int = 1) -> None:
    """Serve `bare_api` under uvicorn (its own workers when `processes` > 1)."""
    if processes > 1:
        uvicorn.run(
            "bench.api_servers:bare_api",
            factory=True,
            host=HOST,
            port=port,
            log_level="warning",
            workers=processes,
        )
    else:
        uvicorn.run(bare_api(), host=HOST, port=port, log_level="warning")


@dataclass
class Server:
    """A server process and what it needs to be called."""

    process: subprocess.Popen[str]
    port: int
    key: str = ""

    def stop(self) -> None:
        """SIGTERM, then wait for the process to end."""
        self.process.terminate()
        self.process.wait(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process and its children so far."""
        pids = [self.process.pid]
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        if children.exists():
            pids += [int(pid) for pid in children.read_text().split()]
        total = 0
        for pid in pids:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def wait_healthy(port: int, path: str) -> None:
    """Poll the server until `path` answers (a real process is starting)."""
    clock = SystemClock()
    deadline = clock.now() + 20_000
    while clock.now() < deadline:
        try:
            httpx.get(f"http://{HOST}:{port}{path}", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.05)
    raise SystemExit(f"the server on port {port} did not start")


def start_bare(processes: int = 1) -> Server:
    """The bare FastAPI endpoint in its own uvicorn process(es)."""
    port = free_port()
    command = [sys.executable, "-m", "bench.api_servers", str(port), str(processes)]
    server = Server(subprocess.Popen(command, text=True), port)
    wait_healthy(port, "/docs")
    return server


def start_backroom(
    folder: Path, *, worker: bool, options: tuple[str, ...] = (), db: str | None = None
) -> Server:
    """`backroom serve` on a fresh database in `folder` (or on `db`), with its first key."""
    port = free_port()
    command = [sys.executable, "-c", CLI, "serve", "--port", str(port), "--log-level", "warning"]
    command += ["--db", db or f"sqlite:///{folder / 'bench.db'}"]
    command += [*([] if worker else ["--no-worker"]), *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    key = ""
    while not key:
        line = process.stdout.readline()
        if not line:
            raise SystemExit("backroom serve exited before printing its key")
        if "BACKROOM_API_KEY=" in line:
            key = line.split("=", 1)[1].strip()
    wait_healthy(port, "/healthz")
    return Server(process, port, key)


# -- load -----------------------------------------------------------------------------


def request_bytes(key: str, number: int) -> bytes:
    """One POST /v1/jobs request, with its own idempotency key."""
    body = json.dumps({"task": "demo.noop", "input": {"n": number}}).encode()
    head = (
        f"POST /v1/jobs HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {key}\r\nIdempotency-Key: bench-{number}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def connection_loop(port: int, key: str, counter: list[int], stop_at: float) -> int:
    """Send requests one after another on one keep-alive connection; how many."""
    reader, writer = await asyncio.open_connection(HOST, port)
    done = 0
    try:
        while time.perf_counter() < stop_at:
            counter[0] += 1
            writer.write(request_bytes(key, counter[0]))
            head = await reader.readuntil(b"\r\n\r\n")
            if not head.startswith((b"HTTP/1.1 202", b"HTTP/1.1 200")):
                raise SystemExit(f"unexpected answer: {head[:80]!r}")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            await reader.readexactly(length)
            done += 1
    finally:
        writer.close()
    return done


async def load(port: int, key: str, seconds: float, connections: int, start: int) -> float:
    """Requests per second over `connections` connections for `seconds`."""
    counter = [start]
    began = time.perf_counter()
    stop_at = began + seconds
    done = await asyncio.gather(
        *(connection_loop(port, key, counter, stop_at) for _ in range(connections))
    )
    return sum(done) / (time.perf_counter() - began)


if __name__ == "__main__":
    run_bare_server(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1)
