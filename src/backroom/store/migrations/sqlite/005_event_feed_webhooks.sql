-- The event feed's durable readers, per-job webhook URLs, and webhook subscriptions and
-- deliveries. The feed itself is job_events: one SQLite writer at a time, so its ids
-- are in commit order and a reader's position is an event id (commit_id stays 0).
CREATE TABLE feed_cursors (
    consumer   TEXT    PRIMARY KEY,
    commit_id  INTEGER NOT NULL DEFAULT 0,
    event_id   INTEGER NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL
);

ALTER TABLE jobs ADD COLUMN webhook_url TEXT;

CREATE TABLE webhook_subscriptions (
    id                    INTEGER PRIMARY KEY,
    tenant                TEXT    NOT NULL,
    url                   TEXT    NOT NULL,
    event_types           TEXT    NOT NULL,
    tasks                 TEXT    NOT NULL DEFAULT '[]',
    queues                TEXT    NOT NULL DEFAULT '[]',
    secret                TEXT    NOT NULL,
    previous_secret       TEXT,
    previous_secret_until INTEGER,
    enabled               INTEGER NOT NULL DEFAULT 1,
    disabled_reason       TEXT,
    failure_streak        INTEGER NOT NULL DEFAULT 0,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL
);
CREATE INDEX webhook_subscriptions_tenant ON webhook_subscriptions (tenant, id);

-- The secret that signs deliveries to a job's own `webhook_url`, one per tenant.
CREATE TABLE webhook_signing_secrets (
    tenant                TEXT    PRIMARY KEY,
    secret                TEXT    NOT NULL,
    previous_secret       TEXT,
    previous_secret_until INTEGER,
    created_at            INTEGER NOT NULL
);

-- One row per (event, receiver): subscription_id 0 is the job's own webhook_url. The
-- unique key is what makes reading the feed twice create no second delivery.
CREATE TABLE webhook_deliveries (
    id              INTEGER PRIMARY KEY,
    tenant          TEXT    NOT NULL,
    job_id          INTEGER NOT NULL,
    subscription_id INTEGER NOT NULL,
    event_id        INTEGER NOT NULL,
    event_type      TEXT    NOT NULL,
    url             TEXT    NOT NULL,
    message_id      TEXT    NOT NULL,
    payload         TEXT    NOT NULL,
    delivery_job_id INTEGER,
    state           TEXT    NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_status     INTEGER,
    last_latency_ms INTEGER,
    last_error      TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (event_id, subscription_id, event_type);
CREATE INDEX webhook_deliveries_job ON webhook_deliveries (job_id, id);

CREATE TABLE webhook_delivery_attempts (
    delivery_id INTEGER NOT NULL,
    number      INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    status      INTEGER,
    latency_ms  INTEGER NOT NULL,
    error       TEXT,
    PRIMARY KEY (delivery_id, number)
);
