-- Tenants and their API keys. Keys are stored as SHA-256 hex digests, never in clear.
CREATE TABLE tenants (
    name             TEXT    PRIMARY KEY,
    created_at       INTEGER NOT NULL,
    max_queued       INTEGER,
    admin            INTEGER NOT NULL DEFAULT 0,
    daily_budget_usd REAL
);

CREATE TABLE api_keys (
    key_hash   TEXT    PRIMARY KEY,
    tenant     TEXT    NOT NULL REFERENCES tenants (name),
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX api_keys_tenant ON api_keys (tenant);
