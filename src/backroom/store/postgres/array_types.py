"""The array types our SQL sends and reads, made known to each new connection up front.

asyncpg looks a type up the first time a statement of a connection uses it: a catalog
query that a fresh server session takes ~10 ms of CPU to plan and run. Left to first
use, the lookup held up a connection's first statement with a new type (a fresh
client's first submit), so every connection is taught our array types as it opens. The
lookup itself runs once per process, on its first connection: each later one (a worker
opens three or four as it starts: the pool's, the claims' session) is handed its
result, as asyncpg hands it to the connection that looked up. These are built-in types,
whose OIDs are the same on every PostgreSQL server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backroom.store.postgres.database import Connection

ARRAY_TYPES = ("bigint[]", "integer[]", "boolean[]", "text[]", "double precision[]")
"""The array types our statements send or read, which asyncpg must look up."""

ARRAY_OIDS = (1016, 1007, 1000, 1009, 1022)
"""The OIDs of `ARRAY_TYPES`, in order (built-in: the same on every server)."""

_PROBE = "SELECT " + ", ".join(f"${n}::{t}" for n, t in enumerate(ARRAY_TYPES, start=1))
"""A statement that takes every one of `ARRAY_TYPES`: preparing it looks them all up."""

_LOOKED_UP: list[Any] = []
"""What this process's first lookup found (asyncpg's type records)."""


async def learn_array_types(connection: Connection) -> None:
    """Make `connection` know our array types now: from this process's lookup, made on
    the first connection (or, with an asyncpg that has no such hooks, its own)."""
    handle: Any = connection
    protocol = getattr(handle, "_protocol", None)
    introspect = getattr(handle, "_introspect_types", None)
    if protocol is not None and introspect is not None:
        try:
            if not _LOOKED_UP:
                types, _ = await introspect(ARRAY_OIDS, None)
                _LOOKED_UP.append(types)
            protocol.get_settings().register_data_types(_LOOKED_UP[0])
            return
        except (AttributeError, TypeError, ValueError):
            # The hooks are asyncpg's own, not its API: should a release reshape them,
            # the connection looks the types up itself, as asyncpg would at first use.
            pass
    await connection.fetchrow(_PROBE, *([] for _ in ARRAY_TYPES))


async def learn_array_types_pooled(connection: Connection) -> None:
    """`learn_array_types` in a transaction, for a transaction pooler's sessions: the
    lookup turns jit off and back on, maybe on several server sessions outside one."""
    async with connection.transaction():
        await learn_array_types(connection)
