"""Tenants and their API keys on PostgreSQL (keys arrive already hashed)."""

from __future__ import annotations

from backroom.core.usage import DailyBudget
from backroom.store.postgres.part import PostgresPart
from backroom.store.records import KeyHolder, KeyInfo, Tenant
from backroom.store.rows import budget_column, tenant_from_row

_TENANT_COLUMNS = (
    "name, created_at, max_queued, admin, daily_budget_pico_usd, max_job_cost_pico_usd"
)
# Revokes only when exactly one of the tenant's keys, revoked or not, has the prefix.
_REVOKE_ONE_KEY = (
    "UPDATE api_keys SET revoked_at = $1 WHERE tenant = $2 AND starts_with(key_hash, $3) "
    "AND revoked_at IS NULL AND (SELECT count(*) FROM api_keys "
    "WHERE tenant = $2 AND starts_with(key_hash, $3)) = 1"
)


class PostgresTenants(PostgresPart):
    """Tenants and their API keys (see `TenantStore`)."""

    async def create_tenant(self, tenant: Tenant, key_hash: str, read_only: bool = False) -> Tenant:
        """Insert the tenant, or update its caps if it exists, and add the key to it."""
        async with self._database.connection() as connection:
            async with connection.transaction():
                row = await connection.fetchrow(
                    f"INSERT INTO tenants ({_TENANT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) "
                    "ON CONFLICT (name) DO UPDATE SET max_queued = excluded.max_queued, "
                    "admin = excluded.admin, "
                    "daily_budget_pico_usd = excluded.daily_budget_pico_usd, "
                    "max_job_cost_pico_usd = excluded.max_job_cost_pico_usd "
                    f"RETURNING {_TENANT_COLUMNS}",
                    tenant.name,
                    tenant.created_at,
                    tenant.max_queued,
                    tenant.admin,
                    budget_column(tenant.daily_budget),
                    tenant.max_job_cost_pico_usd,
                )
                await connection.execute(
                    "INSERT INTO api_keys (key_hash, tenant, created_at, read_only) "
                    "VALUES ($1, $2, $3, $4)",
                    key_hash,
                    tenant.name,
                    tenant.created_at,
                    read_only,
                )
            assert row is not None  # INSERT ... RETURNING always yields the row
            return tenant_from_row(row)

    async def update_tenant(
        self,
        name: str,
        max_queued: int | None,
        daily_budget: DailyBudget | None,
        max_job_cost_pico_usd: int | None,
    ) -> Tenant | None:
        """Set the caps of tenant `name`; the tenant, or None if unknown."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(
                "UPDATE tenants SET max_queued = $1, daily_budget_pico_usd = $2, "
                f"max_job_cost_pico_usd = $3 WHERE name = $4 RETURNING {_TENANT_COLUMNS}",
                max_queued,
                budget_column(daily_budget),
                max_job_cost_pico_usd,
                name,
            )
            return None if row is None else tenant_from_row(row)

    async def tenant_for_key(self, key_hash: str) -> KeyHolder | None:
        """The tenant an unrevoked key belongs to, with the key's role, or None."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(
                "SELECT t.name, t.created_at, t.max_queued, t.admin, t.daily_budget_pico_usd, "
                "t.max_job_cost_pico_usd, k.read_only "
                "FROM api_keys AS k JOIN tenants AS t ON t.name = k.tenant "
                "WHERE k.key_hash = $1 AND k.revoked_at IS NULL",
                key_hash,
            )
            return None if row is None else KeyHolder(tenant_from_row(row), row["read_only"])

    async def get_tenant(self, name: str) -> Tenant | None:
        """The tenant called `name`, or None."""
        async with self._database.connection() as connection:
            row = await connection.fetchrow(
                f"SELECT {_TENANT_COLUMNS} FROM tenants WHERE name = $1", name
            )
            return None if row is None else tenant_from_row(row)

    async def list_tenants(self) -> list[Tenant]:
        """Every tenant, by name."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(f"SELECT {_TENANT_COLUMNS} FROM tenants ORDER BY name")
            return [tenant_from_row(row) for row in rows]

    async def revoke_keys(self, tenant: str, now: int) -> int:
        """Revoke every unrevoked key of the tenant; how many were revoked."""
        async with self._database.connection() as connection:
            status = await connection.execute(
                "UPDATE api_keys SET revoked_at = $1 WHERE tenant = $2 AND revoked_at IS NULL",
                now,
                tenant,
            )
            # asyncpg reports "UPDATE <count>".
            return int(status.rsplit(" ", 1)[-1])

    async def list_keys(self, tenant: str) -> list[KeyInfo]:
        """Every key of the tenant, revoked or not, oldest first."""
        async with self._database.connection() as connection:
            rows = await connection.fetch(
                "SELECT key_hash, created_at, revoked_at, read_only FROM api_keys "
                "WHERE tenant = $1 ORDER BY created_at, key_hash",
                tenant,
            )
            return [
                KeyInfo(row["key_hash"], row["created_at"], row["revoked_at"], row["read_only"])
                for row in rows
            ]

    async def revoke_key(self, tenant: str, key_id_prefix: str, now: int) -> bool:
        """Revoke the tenant's one key whose hash starts with the prefix (see `TenantStore`)."""
        async with self._database.connection() as connection:
            status = await connection.execute(_REVOKE_ONE_KEY, now, tenant, key_id_prefix)
            return status == "UPDATE 1"

    async def session_secret(self, candidate: str) -> str:
        """The stored dashboard session secret (`candidate`, if none was stored)."""
        async with self._database.connection() as connection:
            secret = await connection.fetchval(
                "WITH made AS (INSERT INTO server_secrets (name, secret) VALUES ('session', $1) "
                "ON CONFLICT (name) DO NOTHING RETURNING secret) "
                "SELECT secret FROM made UNION ALL "
                "SELECT secret FROM server_secrets WHERE name = 'session' LIMIT 1",
                candidate,
            )
            if secret is None:  # another server stored it after this statement's snapshot
                secret = await connection.fetchval(
                    "SELECT secret FROM server_secrets WHERE name = 'session'"
                )
            return str(secret)
