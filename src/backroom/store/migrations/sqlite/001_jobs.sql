-- Jobs, their attempts, their transitions, and `once` records.
-- Times are INTEGER milliseconds since the Unix epoch; JSON values are TEXT.
CREATE TABLE jobs (
    id               INTEGER PRIMARY KEY,
    tenant           TEXT    NOT NULL,
    task             TEXT    NOT NULL,
    queue            TEXT    NOT NULL,
    priority         INTEGER NOT NULL DEFAULT 0,
    state            TEXT    NOT NULL,
    input            TEXT    NOT NULL,
    attempt          INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL,
    timeout_ms       INTEGER,
    run_at           INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    started_at       INTEGER,
    finished_at      INTEGER,
    idempotency_key  TEXT,
    fingerprint      TEXT,
    lease_token      INTEGER NOT NULL DEFAULT 0,
    lease_expires_at INTEGER,
    worker_id        TEXT,
    result           TEXT,
    error_kind       TEXT,
    error_message    TEXT,
    progress         REAL,
    partial          TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    metadata         TEXT    NOT NULL DEFAULT '{}'
);

-- Idempotency keys are scoped to the tenant.
CREATE UNIQUE INDEX jobs_idempotency ON jobs (tenant, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
-- The claimable set, per queue and tenant in claim order (see sqlite_leases).
CREATE INDEX jobs_claim ON jobs (queue, tenant, priority DESC, run_at, id)
    WHERE state = 'queued';
CREATE INDEX jobs_leases ON jobs (lease_expires_at) WHERE state = 'running';
CREATE INDEX jobs_tenant ON jobs (tenant, id);
-- Counting a tenant's active jobs against its cap.
CREATE INDEX jobs_active ON jobs (tenant) WHERE state IN ('queued', 'running');
CREATE INDEX jobs_failed ON jobs (id) WHERE state = 'failed';

CREATE TABLE attempts (
    id              INTEGER PRIMARY KEY,
    job_id          INTEGER NOT NULL,
    number          INTEGER NOT NULL,
    lease_token     INTEGER NOT NULL,
    worker_id       TEXT    NOT NULL,
    started_at      INTEGER NOT NULL,
    finished_at     INTEGER,
    outcome         TEXT,
    error_kind      TEXT,
    error_message   TEXT,
    next_attempt_at INTEGER
);
CREATE UNIQUE INDEX attempts_lease ON attempts (job_id, lease_token);

CREATE TABLE job_events (
    id         INTEGER PRIMARY KEY,
    job_id     INTEGER NOT NULL,
    at         INTEGER NOT NULL,
    from_state TEXT,
    to_state   TEXT    NOT NULL,
    reason     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX job_events_job ON job_events (job_id, id);

CREATE TABLE once_records (
    job_id     INTEGER NOT NULL,
    name       TEXT    NOT NULL,
    done       INTEGER NOT NULL DEFAULT 0,
    result     TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (job_id, name)
);
