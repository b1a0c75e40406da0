"""The SQL behind the store's tenant methods, for PostgreSQL.

Plain coroutines on an asyncpg connection, which `PostgresStore` takes from its pool
(writes inside a transaction it opens). Keys arrive already hashed.
"""

from __future__ import annotations

from typing import TypeAlias

import asyncpg

from backroom.store.records import Tenant
from backroom.store.rows import budget_column, tenant_from_row

_TENANT_COLUMNS = "name, created_at, max_queued, admin, daily_budget_pico_usd"

# A string: asyncpg's classes are generic for type checkers only.
Connection: TypeAlias = (
    "asyncpg.Connection[asyncpg.Record] | asyncpg.pool.PoolConnectionProxy[asyncpg.Record]"
)
"""A connection, or a pool's proxy for one."""


async def create_tenant(connection: Connection, tenant: Tenant, key_hash: str) -> Tenant:
    """Insert the tenant, or update its caps if it exists, and add the key to it."""
    async with connection.transaction():
        row = await connection.fetchrow(
            f"INSERT INTO tenants ({_TENANT_COLUMNS}) VALUES ($1, $2, $3, $4, $5) "
            "ON CONFLICT (name) DO UPDATE SET max_queued = excluded.max_queued, "
            "admin = excluded.admin, daily_budget_pico_usd = excluded.daily_budget_pico_usd "
            f"RETURNING {_TENANT_COLUMNS}",
            tenant.name,
            tenant.created_at,
            tenant.max_queued,
            tenant.admin,
            budget_column(tenant),
        )
        await connection.execute(
            "INSERT INTO api_keys (key_hash, tenant, created_at) VALUES ($1, $2, $3)",
            key_hash,
            tenant.name,
            tenant.created_at,
        )
    assert row is not None  # INSERT ... RETURNING always yields the row
    return tenant_from_row(row)


async def tenant_for_key(connection: Connection, key_hash: str) -> Tenant | None:
    """The tenant an unrevoked key belongs to, or None."""
    row = await connection.fetchrow(
        "SELECT t.name, t.created_at, t.max_queued, t.admin, t.daily_budget_pico_usd "
        "FROM api_keys AS k JOIN tenants AS t ON t.name = k.tenant "
        "WHERE k.key_hash = $1 AND k.revoked_at IS NULL",
        key_hash,
    )
    return None if row is None else tenant_from_row(row)


async def get_tenant(connection: Connection, name: str) -> Tenant | None:
    """The tenant called `name`, or None."""
    row = await connection.fetchrow(f"SELECT {_TENANT_COLUMNS} FROM tenants WHERE name = $1", name)
    return None if row is None else tenant_from_row(row)


async def list_tenants(connection: Connection) -> list[Tenant]:
    """Every tenant, by name."""
    rows = await connection.fetch(f"SELECT {_TENANT_COLUMNS} FROM tenants ORDER BY name")
    return [tenant_from_row(row) for row in rows]


async def revoke_keys(connection: Connection, tenant: str, now: int) -> int:
    """Revoke every unrevoked key of the tenant; how many were revoked."""
    status = await connection.execute(
        "UPDATE api_keys SET revoked_at = $1 WHERE tenant = $2 AND revoked_at IS NULL",
        now,
        tenant,
    )
    # asyncpg reports "UPDATE <count>".
    return int(status.rsplit(" ", 1)[-1])
