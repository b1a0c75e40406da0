"""Server-sent events: 1,000 clients on one `backroom serve` process, memory and fan-out.

    python -m bench.sse_fanout [--clients 1000] [--rounds 3]

A real `backroom serve --no-worker` on a fresh SQLite database. One client process
opens `--clients` raw keep-alive connections to `GET /v1/events` (asyncio sockets, so
the client side stays cheap), and the server's resident memory is read from
/proc/PID/status before the first and once all are streaming: the difference over the
clients is the memory one subscriber costs. Then, `--rounds` times, one job is
submitted over HTTP and the time from the submit request to each client reading the
event is taken: the p50 and the last of them say how long one event takes to reach
everyone.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from bench.api_servers import HOST, Server, start_backroom

SETTLE_S = 2.0
"""Time for the server to finish setting up the last streams before memory is read."""


def start_server(folder: Path, clients: int) -> Server:
    """`backroom serve --no-worker` on a fresh database, allowed `clients` and a few more."""
    return start_backroom(folder, worker=False, options=("--max-connections", str(clients + 50)))


def rss_kib(pid: int) -> int:
    """The process's resident set size in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise SystemExit(f"no VmRSS for process {pid}")


class Subscriber:
    """One raw SSE connection that reports when each event's `id:` line arrives."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    @classmethod
    async def open(cls, port: int, key: str) -> Subscriber:
        """Connect and read the response head (a 200)."""
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.write(
            f"GET /v1/events HTTP/1.1\r\nHost: {HOST}\r\nAccept: text/event-stream\r\n"
            f"Authorization: Bearer {key}\r\n\r\n".encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise SystemExit(f"the stream was refused: {head.splitlines()[0]!r}")
        return cls(reader, writer)

    async def next_event(self) -> float:
        """`time.perf_counter()` when the next event's `id:` line arrives."""
        while True:
            line = await self._reader.readline()
            if not line:
                raise SystemExit("the server closed a stream")
            if line.startswith(b"id:"):
                return time.perf_counter()

    def close(self) -> None:
        """Drop the connection."""
        self._writer.close()


async def fan_out(server: Server, subscribers: list[Subscriber], number: int) -> list[float]:
    """Submit one job; the seconds until each subscriber read its event."""
    arrivals = [asyncio.create_task(subscriber.next_event()) for subscriber in subscribers]
    async with httpx.AsyncClient(base_url=f"http://{HOST}:{server.port}") as client:
        started = time.perf_counter()
        answer = await client.post(
            "/v1/jobs",
            json={"task": "demo.noop", "input": {"n": number}},
            headers={"Authorization": f"Bearer {server.key}"},
        )
        answer.raise_for_status()
    return [moment - started for moment in await asyncio.gather(*arrivals)]


async def measure(server: Server, clients: int, rounds: int) -> None:
    """Open the clients, read memory, fan events out, print the figures."""
    pid = server.process.pid
    before = rss_kib(pid)
    started = time.perf_counter()
    subscribers = await asyncio.gather(
        *(Subscriber.open(server.port, server.key) for _ in range(clients))
    )
    connected = time.perf_counter() - started
    await asyncio.sleep(SETTLE_S)
    after = rss_kib(pid)
    print(f"{clients:,} SSE clients on GET /v1/events, one `backroom serve` process\n")
    print(f"- all connected and streaming in {connected:.2f} s")
    print(f"- server RSS {before / 1024:.1f} MiB before, {after / 1024:.1f} MiB after:")
    print(f"  {(after - before) / clients:.1f} KiB per client")
    for number in range(rounds):
        delays = await fan_out(server, list(subscribers), number)
        cuts = statistics.quantiles(delays, n=100, method="inclusive")
        print(
            f"- event {number + 1}: submit to all {clients:,} clients {max(delays) * 1000:.0f} ms"
            f" (p50 {cuts[49] * 1000:.0f} ms, first {min(delays) * 1000:.0f} ms)"
        )
    print(f"- server RSS at the end {rss_kib(pid) / 1024:.1f} MiB")
    for subscriber in subscribers:
        subscriber.close()


def main() -> None:
    """Start the server, measure, stop it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        server = start_server(Path(folder), args.clients)
        try:
            asyncio.run(measure(server, args.clients, args.rounds))
        finally:
            server.stop()


if __name__ == "__main__":
    main()
