-- Tenants and their API keys (the SQLite schema, migrations/sqlite/002_tenants.sql,
-- in PostgreSQL types). Keys are stored as SHA-256 hex digests, never in clear.
CREATE TABLE tenants (
    name             TEXT             PRIMARY KEY,
    created_at       BIGINT           NOT NULL,
    max_queued       INTEGER,
    admin            BOOLEAN          NOT NULL DEFAULT FALSE,
    daily_budget_usd DOUBLE PRECISION
);

CREATE TABLE api_keys (
    key_hash   TEXT   PRIMARY KEY,
    tenant     TEXT   NOT NULL REFERENCES tenants (name),
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX api_keys_tenant ON api_keys (tenant);
