"""Tenants and their API keys on SQLite (`SqliteTenants`); keys arrive already hashed."""

from __future__ import annotations

import sqlite3

from backroom.core.usage import DailyBudget
from backroom.store.records import KeyHolder, KeyInfo, Tenant
from backroom.store.rows import budget_column, tenant_from_row
from backroom.store.sqlite.part import SqlitePart

_TENANT_COLUMNS = (
    "name, created_at, max_queued, admin, daily_budget_pico_usd, max_job_cost_pico_usd"
)
# Revokes only when exactly one of the tenant's keys, revoked or not, has the prefix.
_REVOKE_ONE_KEY = (
    "UPDATE api_keys SET revoked_at = ?1 WHERE tenant = ?2 AND substr(key_hash, 1, ?4) = ?3 "
    "AND revoked_at IS NULL AND (SELECT count(*) FROM api_keys "
    "WHERE tenant = ?2 AND substr(key_hash, 1, ?4) = ?3) = 1"
)


def _create_tenant(
    connection: sqlite3.Connection, tenant: Tenant, key_hash: str, read_only: bool
) -> Tenant:
    """Insert the tenant, or update its caps if it exists, and add the key to it."""
    row = connection.execute(
        f"INSERT INTO tenants ({_TENANT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET max_queued = excluded.max_queued, "
        "admin = excluded.admin, daily_budget_pico_usd = excluded.daily_budget_pico_usd, "
        "max_job_cost_pico_usd = excluded.max_job_cost_pico_usd "
        f"RETURNING {_TENANT_COLUMNS}",
        (
            tenant.name,
            tenant.created_at,
            tenant.max_queued,
            int(tenant.admin),
            budget_column(tenant.daily_budget),
            tenant.max_job_cost_pico_usd,
        ),
    ).fetchone()
    connection.execute(
        "INSERT INTO api_keys (key_hash, tenant, created_at, read_only) VALUES (?, ?, ?, ?)",
        (key_hash, tenant.name, tenant.created_at, int(read_only)),
    )
    return tenant_from_row(row)


def _update_tenant(
    connection: sqlite3.Connection,
    name: str,
    caps: tuple[int | None, DailyBudget | None, int | None],
) -> Tenant | None:
    """Set the tenant's caps (max queued, daily budget, max job cost); the tenant, or None."""
    max_queued, budget, max_job_cost = caps
    row = connection.execute(
        "UPDATE tenants SET max_queued = ?, daily_budget_pico_usd = ?, max_job_cost_pico_usd = ? "
        f"WHERE name = ? RETURNING {_TENANT_COLUMNS}",
        (max_queued, budget_column(budget), max_job_cost, name),
    ).fetchone()
    return None if row is None else tenant_from_row(row)


def _tenant_for_key(connection: sqlite3.Connection, key_hash: str) -> KeyHolder | None:
    """The tenant an unrevoked key belongs to, with the key's role, or None."""
    row = connection.execute(
        "SELECT t.name, t.created_at, t.max_queued, t.admin, t.daily_budget_pico_usd, "
        "t.max_job_cost_pico_usd, k.read_only "
        "FROM api_keys AS k JOIN tenants AS t ON t.name = k.tenant "
        "WHERE k.key_hash = ? AND k.revoked_at IS NULL",
        (key_hash,),
    ).fetchone()
    return None if row is None else KeyHolder(tenant_from_row(row), bool(row["read_only"]))


def _get_tenant(connection: sqlite3.Connection, name: str) -> Tenant | None:
    """The tenant called `name`, or None."""
    row = connection.execute(
        f"SELECT {_TENANT_COLUMNS} FROM tenants WHERE name = ?", (name,)
    ).fetchone()
    return None if row is None else tenant_from_row(row)


def _list_tenants(connection: sqlite3.Connection) -> list[Tenant]:
    """Every tenant, by name."""
    rows = connection.execute(f"SELECT {_TENANT_COLUMNS} FROM tenants ORDER BY name").fetchall()
    return [tenant_from_row(row) for row in rows]


def _revoke_keys(connection: sqlite3.Connection, tenant: str, now: int) -> int:
    """Revoke every unrevoked key of the tenant; how many were revoked."""
    cursor = connection.execute(
        "UPDATE api_keys SET revoked_at = ? WHERE tenant = ? AND revoked_at IS NULL",
        (now, tenant),
    )
    return cursor.rowcount


def _list_keys(connection: sqlite3.Connection, tenant: str) -> list[KeyInfo]:
    """Every key of the tenant, oldest first."""
    rows = connection.execute(
        "SELECT key_hash, created_at, revoked_at, read_only FROM api_keys WHERE tenant = ? "
        "ORDER BY created_at, key_hash",
        (tenant,),
    ).fetchall()
    return [
        KeyInfo(row["key_hash"], row["created_at"], row["revoked_at"], bool(row["read_only"]))
        for row in rows
    ]


def _session_secret(connection: sqlite3.Connection, candidate: str) -> str:
    """Store `candidate` unless a secret is stored already; the stored one."""
    connection.execute(
        "INSERT INTO server_secrets (name, secret) VALUES ('session', ?) "
        "ON CONFLICT (name) DO NOTHING",
        (candidate,),
    )
    (secret,) = connection.execute(
        "SELECT secret FROM server_secrets WHERE name = 'session'"
    ).fetchone()
    return str(secret)


def _revoke_key(connection: sqlite3.Connection, tenant: str, prefix: str, now: int) -> bool:
    """Revoke the tenant's one unrevoked key the prefix names (see `TenantStore.revoke_key`)."""
    cursor = connection.execute(_REVOKE_ONE_KEY, (now, tenant, prefix, len(prefix)))
    return cursor.rowcount == 1


class SqliteTenants(SqlitePart):
    """Tenants and their API keys (see `TenantStore`)."""

    async def create_tenant(self, tenant: Tenant, key_hash: str, read_only: bool = False) -> Tenant:
        """Create `tenant` (or update its caps if it exists) and add the key to it."""
        return await self._database.write(
            lambda connection: _create_tenant(connection, tenant, key_hash, read_only)
        )

    async def update_tenant(
        self,
        name: str,
        max_queued: int | None,
        daily_budget: DailyBudget | None,
        max_job_cost_pico_usd: int | None,
    ) -> Tenant | None:
        """Set the caps of tenant `name`; the tenant, or None if unknown."""
        return await self._database.write(
            lambda connection: _update_tenant(
                connection, name, (max_queued, daily_budget, max_job_cost_pico_usd)
            )
        )

    async def tenant_for_key(self, key_hash: str) -> KeyHolder | None:
        """The tenant an unrevoked key belongs to, with the key's role, or None."""
        return await self._database.read(lambda connection: _tenant_for_key(connection, key_hash))

    async def get_tenant(self, name: str) -> Tenant | None:
        """The tenant called `name`, or None."""
        return await self._database.read(lambda connection: _get_tenant(connection, name))

    async def list_tenants(self) -> list[Tenant]:
        """Every tenant, by name."""
        return await self._database.read(_list_tenants)

    async def revoke_keys(self, tenant: str, now: int) -> int:
        """Revoke every key of the tenant; how many were revoked."""
        return await self._database.write(lambda connection: _revoke_keys(connection, tenant, now))

    async def list_keys(self, tenant: str) -> list[KeyInfo]:
        """Every key of the tenant, revoked or not, oldest first."""
        return await self._database.read(lambda connection: _list_keys(connection, tenant))

    async def revoke_key(self, tenant: str, key_id_prefix: str, now: int) -> bool:
        """Revoke the tenant's one key whose hash starts with the prefix (see `TenantStore`)."""
        return await self._database.write(
            lambda connection: _revoke_key(connection, tenant, key_id_prefix, now)
        )

    async def session_secret(self, candidate: str) -> str:
        """The stored dashboard session secret (`candidate`, if none was stored)."""
        return await self._database.write(lambda connection: _session_secret(connection, candidate))
