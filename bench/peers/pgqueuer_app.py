"""PgQueuer at its defaults (`PgQueuer.run()`: batches of 10, LISTEN/NOTIFY).

    python -m bench.peers.pgqueuer_app

`pgq run bench.peers.pgqueuer_app:create` is the CLI's way to start the same worker
with the same defaults, but PgQueuer 1.6.0's CLI fails at start-up beside typer 0.29
(its --log-level reaches the logger as a string), so this module runs it as PgQueuer's
documented script does.
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
from pgqueuer import AsyncpgDriver, PgQueuer

from bench.peers.env import POSTGRES, setting
from bench.peers.marks import mark_async


async def create() -> Any:
    """The PgQueuer to run: one entrypoint, `noop`."""
    connection = await asyncpg.connect(setting(POSTGRES))
    queuer = PgQueuer(AsyncpgDriver(connection))
    queuer.entrypoint("noop")(mark_async)
    return queuer


async def main() -> None:
    """Run the worker until it is stopped."""
    await (await create()).run()


if __name__ == "__main__":
    asyncio.run(main())
