"""HTTP API benchmark: POST /v1/jobs requests/s, beside a bare FastAPI endpoint, and
submit -> succeeded latency of a no-op job.

    .venv/bin/python -m bench.api_throughput [--seconds 5] [--connections 32]

Each server is one uvicorn process on loopback. The bare endpoint validates the same
request model and answers a fixed 202, so the gap between the two is what backroom
adds: the API key lookup, the idempotency fingerprint and the durable insert (SQLite,
synchronous=FULL). The load comes from one client process of raw keep-alive HTTP/1.1
connections (a Python HTTP client library would be slower than the servers). The
latency run submits no-op jobs one at a time to a server with its worker and reads
each job's stored created and finished times: the queue's own latency, no polling.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from backroom.api.models.jobs import SubmitRequest
from backroom.client import Client, ClientConfig
from backroom.clock import SystemClock

HOST = "127.0.0.1"
CLI = "from backroom.cli.main import main; main()"


# -- the bare endpoint ----------------------------------------------------------------


def run_bare_server(port: int) -> None:
    """Serve only POST /v1/jobs, validating the body with backroom's own model."""
    api = FastAPI()

    @api.post("/v1/jobs", status_code=202)
    async def submit(body: SubmitRequest) -> dict[str, Any]:
        return {"id": 1, "task": body.task, "status": "queued"}

    uvicorn.run(api, host=HOST, port=port, log_level="warning")


# -- servers --------------------------------------------------------------------------


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


def start_bare() -> Server:
    """The bare FastAPI endpoint in its own uvicorn process."""
    port = free_port()
    command = [sys.executable, "-m", "bench.api_throughput", "--bare-server", str(port)]
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


def throughput(server: Server, seconds: float, connections: int, start: int) -> float:
    """Requests per second after a one-second warm-up."""
    asyncio.run(load(server.port, server.key, 1.0, connections, start))  # warm-up
    return asyncio.run(load(server.port, server.key, seconds, connections, start + 10**7))


# -- latency --------------------------------------------------------------------------


def latencies(server: Server, jobs: int) -> list[int]:
    """Stored finished - created times (ms) of no-op jobs submitted one at a time."""
    quick = ClientConfig(poll_first_s=0.005, poll_cap_s=0.05)
    with Client(f"http://{HOST}:{server.port}", server.key, config=quick) as client:
        ids = []
        for _ in range(jobs):
            submitted = client.submit("demo.noop", None)
            ids.append(submitted.job.id)
            client.wait(submitted.job.id, timeout_s=30)
        documents = [client.get(job_id).document for job_id in ids]

    def ms(text: str) -> float:
        return datetime.fromisoformat(text).timestamp() * 1000

    return [round(ms(doc["finished_at"]) - ms(doc["created_at"])) for doc in documents]


def percentile(values: list[int], share: float) -> int:
    """The value below which `share` of `values` fall (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    """Run both throughput measurements and the latency run; print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--jobs", type=int, default=200, help="jobs for the latency run")
    parser.add_argument("--bare-server", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.bare_server:
        run_bare_server(options.bare_server)
        return
    with tempfile.TemporaryDirectory() as folder:
        bare = start_bare()
        try:
            bare_rate = throughput(bare, options.seconds, options.connections, 0)
        finally:
            bare.stop()
        api_folder = Path(folder) / "api"
        api_folder.mkdir()
        backroom = start_backroom(api_folder, worker=False)
        try:
            api_rate = throughput(backroom, options.seconds, options.connections, 0)
        finally:
            backroom.stop()
        latency_folder = Path(folder) / "latency"
        latency_folder.mkdir()
        served = start_backroom(latency_folder, worker=True)
        try:
            measured = latencies(served, options.jobs)
        finally:
            served.stop()
    print(f"| bare FastAPI POST /v1/jobs | {bare_rate:,.0f} req/s |")
    print(f"| backroom POST /v1/jobs | {api_rate:,.0f} req/s ({api_rate / bare_rate:.0%}) |")
    print(
        f"| no-op submit -> succeeded | p50 {percentile(measured, 0.5)} ms, "
        f"p99 {percentile(measured, 0.99)} ms, mean {statistics.mean(measured):.1f} ms |"
    )


if __name__ == "__main__":
    main()
