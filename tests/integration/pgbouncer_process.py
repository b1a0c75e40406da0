"""A real PgBouncer (Debian's package) in front of the local PostgreSQL, for one test.

`run_pgbouncer` writes a pgbouncer.ini and a userlist into a folder of the caller's,
starts `/usr/sbin/pgbouncer` on a free loopback port, waits (with a deadline) until it
answers a query, and stops it afterwards. Everything else is PgBouncer's default
configuration: `pool_mode` (session by default, or transaction), `default_pool_size`
20, `max_client_conn` 100, no `ignore_startup_parameters`. Clients authenticate with md5
against the userlist, as Debian's packaged configuration does.

PgBouncer refuses to run as root: as root it is started with `-u postgres`, which it
switches to after reading its files.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import asyncpg

PGBOUNCER = Path("/usr/sbin/pgbouncer")
START_DEADLINE_S = 20.0
USER = "postgres"

CONFIG = """\
[databases]
* = host={host} port={port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen_port}
unix_socket_dir =
auth_type = md5
auth_file = {userlist}
pool_mode = {mode}
logfile =
pidfile =
"""


@dataclass(frozen=True)
class PgBouncer:
    """A running PgBouncer: where it listens, in which mode, and its log file."""

    port: int
    mode: str
    password: str
    log: Path

    def url(self, database: str) -> str:
        """A URL for `database` through this PgBouncer (without backroom's options)."""
        return f"postgresql://{USER}:{self.password}@127.0.0.1:{self.port}/{database}"


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _answers(url: str) -> bool:
    try:
        connection = await asyncpg.connect(url, timeout=2)
    except (OSError, asyncpg.PostgresError, TimeoutError):
        return False
    try:
        return bool(await connection.fetchval("SELECT 1") == 1)
    finally:
        await connection.close()


def _write_config(folder: Path, server_url: str, mode: str, password: str) -> tuple[Path, int]:
    """The config file and userlist for `mode`; the config's path and the port it names."""
    server = urlsplit(server_url)
    folder.mkdir(parents=True, exist_ok=True)
    userlist = folder / "userlist.txt"
    userlist.write_text(f'"{USER}" "{password}"\n')
    config = folder / "pgbouncer.ini"
    listen_port = free_port()
    config.write_text(
        CONFIG.format(
            host=server.hostname,
            port=server.port or 5432,
            listen_port=listen_port,
            userlist=userlist,
            mode=mode,
        )
    )
    for path in (userlist, config):
        path.chmod(0o644)
    return config, listen_port


@contextmanager
def run_pgbouncer(folder: Path, server_url: str, database: str, mode: str) -> Iterator[PgBouncer]:
    """A PgBouncer in `mode` in front of the server `server_url` names, until the end."""
    password = secrets.token_hex(8)
    config, port = _write_config(folder, server_url, mode, password)
    command = [str(PGBOUNCER), str(config)]
    if os.geteuid() == 0:
        command[1:1] = ["-u", USER]
    log = folder / "pgbouncer.log"
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    bouncer = PgBouncer(port, mode, password, log)
    try:
        deadline = time.monotonic() + START_DEADLINE_S
        while not asyncio.run(_answers(bouncer.url(database))):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"PgBouncer did not start:\n{log.read_text()}")
            time.sleep(0.05)
        yield bouncer
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def store_url(bouncer: PgBouncer, database: str, **options: str) -> str:
    """The URL backroom is given for `database` through `bouncer`, with its pooler option."""
    query = {"pooler": bouncer.mode, **options}
    return bouncer.url(database) + "?" + urlencode(query)
